#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The memory plan made before anything large is read, generated or allocated (run/memory_budget.hpp,
plan_memory_before_input; issue 50) refuses a mesh far too large for the machine within 5 s, on every path:

  check_memory_refusal.py --mpiexec M --np N --edgefem E --out DIR --data tests/data

1. `edgefem run` of the 600^3 box (1.3e9 tets, tests/data/box_600.yaml) as a static, an implicit dynamic, a
   position-based and a frame-based job, and a membrane sheet of 30000 x 30000 cells (1.8e9 triangles);
2. `edgefem run` of a MSH 4.1 binary file whose headers announce the same 1.3e9 tets (a sparse file: its data is a
   hole, so the plan must judge it from the headers alone);
3. `edgefem info` and `edgefem bench` of the box.
Each: exit status 1 (every rank), under 5 s, the message with the need per rank and in all, the node's memory and
the rank count that would fit (info: the whole mesh on one process), and no result file.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sparse_msh  # noqa: E402

LIMIT_S = 5.0


def fail(message):
    print(f"check_memory_refusal: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def refused(args, what, command, expect):
    start = time.monotonic()
    p = subprocess.run([args.mpiexec, "-n", str(args.np), "--oversubscribe", args.edgefem, *command],
                       capture_output=True, text=True, timeout=120)
    seconds = time.monotonic() - start
    text = p.stdout + p.stderr
    if p.returncode != 1:
        fail(f"{what}: exit status {p.returncode}, expected 1:\n{text}")
    if seconds > LIMIT_S:
        fail(f"{what}: refused after {seconds:.1f} s, expected under {LIMIT_S} s:\n{text}")
    for pattern in expect:
        if not re.search(pattern, text):
            fail(f"{what}: no match for '{pattern}' in:\n{text}")
    print(f"check_memory_refusal: {what}: refused in {seconds:.2f} s")


RUN = [r"too large for this machine, by the estimate made before the mesh is (generated|read)",
       r"needs [0-9.]+ [GT]B per rank and [0-9.]+ [GT]B in all on [0-9]+ ranks?",
       r"node \S+ has [0-9.]+ [GMT]B available for its [0-9]+ ranks?",
       r"it would fit on [0-9]+ ranks at [0-9]+ per node",
       r"--ignore-memory-estimate runs anyway"]

KINDS = {
    "static": "",
    "dynamic": "analysis: {type: dynamic, dt: 0.01, end_time: 0.02}\n",
    "position_based": "analysis: {type: dynamic, dt: 0.01, end_time: 0.02, integrator: position-based}\n",
    "frames": "discretization: {type: frames, frames: 8}\n",
}


def box_job(data, out, kind):
    text = open(os.path.join(data, "box_600.yaml"), encoding="utf-8").read()
    if KINDS[kind]:
        text = re.sub(r"analysis: .*\n", "", text) + KINDS[kind]
        if kind == "frames":
            text += "analysis: {type: static, steps: 1}\n"
    path = os.path.join(out, f"box_600_{kind}.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def main():
    parser = argparse.ArgumentParser()
    for name in ("--mpiexec", "--edgefem", "--out", "--data"):
        parser.add_argument(name, required=True)
    parser.add_argument("--np", type=int, required=True)
    args = parser.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    results = os.path.join(args.out, "results")
    for kind in KINDS:
        refused(args, f"run ({kind})", ["run", box_job(args.data, args.out, kind), "--output", results], RUN)
    sheet = write(os.path.join(args.out, "sheet.yaml"),
                  "mesh: {generate: {shape: sheet, size: [1, 1], cells: [30000, 30000]}}\n"
                  "materials: [{model: trbs, young: 1.0e6, poisson: 0.3, thickness: 1.0e-3, density: 1000}]\n"
                  "boundary: [{select: {all: true}, fix: [x, y, z]}]\n"
                  "analysis: {type: static, steps: 1}\n")
    refused(args, "run (membranes)", ["run", sheet, "--output", results], RUN + [r"1800000000 triangles"])
    sparse_msh.write(os.path.join(args.out, "big.msh"), 217081801, 1296000000)
    big = write(os.path.join(args.out, "big_file.yaml"),
                "mesh: {file: big.msh}\n"
                "materials: [{model: stvk, young: 1.0e4, poisson: 0.3, density: 1.0}]\n"
                "boundary: [{select: {region: 1}, fix: [x, y, z]}]\n"
                "analysis: {type: static, steps: 1}\n")
    refused(args, "run (mesh file headers)", ["run", big, "--output", results],
            RUN + [r"big.msh: its headers announce 1296000000 tetrahedra, 217081801 vertices"])
    box = os.path.join(args.data, "box_600.yaml")
    refused(args, "info", ["info", box], [r"edgefem info holds the whole mesh with its topology on one process",
                                           r"`edgefem run` distributes the mesh over its ranks instead: by the same "
                                           r"estimate it needs [0-9.]+ TB in all and would fit on [0-9]+ ranks"])
    refused(args, "bench", ["bench", box, "--repeat", "1"],
            RUN[:3] + [r"rank 0 holding the whole mesh", r"no number of such nodes holds it; rank 0 alone must hold"])
    if os.path.exists(results) and any(f != "summary.json" for f in os.listdir(results)):
        fail(f"files written besides summary.json: {os.listdir(results)}")
    print("check_memory_refusal: memory refusal OK")


if __name__ == "__main__":
    main()
