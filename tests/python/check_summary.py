#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs `mpiexec -n NP edgefem run ARGS --output OUT` and checks OUT/summary.json (docs/guide/running.md "Run summary").

  check_summary.py --mpiexec M --np N --edgefem E --out DIR [--expect ok|error] [--analysis static|dynamic]
                   [--vertices V --cells C --cell-kind tet|triangle] [--message TEXT] [--restart-from-end-time T]
                   -- JOB [edgefem arguments]

--expect ok: exit status 0, status "ok", the counts given, the partition's owned vertices summing to the mesh's,
phases >= 0 that sum to at most the total, Newton and KSP iterations > 0, one peak memory per rank, the largest
displacement as printed on stdout. --expect error: a non-zero exit status that the summary repeats, status "error",
the message (containing --message) and no temporary file left. Before running, a stale summary.json is planted in
OUT: it must be replaced. --restart-from-end-time T: first runs a copy of the (dynamic) job that ends at T into OUT,
then the checked run continues it with --restart OUT (the summary names the checkpoint and the first step).
"""
import argparse
import json
import math
import os
import re
import shutil
import subprocess
import sys

PHASES = ["job", "read", "partition", "distribute", "setup", "assembly", "pc_setup", "ksp", "output"]
SPLIT = ["assembly_local", "assembly_insertion", "assembly_exchange", "assembly_barrier_wait"]
# The set-up's laps (core/setup_laps.hpp), in order.
SETUP = ["input_report", "memory_plan", "supports", "model_cells", "topology", "kernel_data", "model_loads", "header",
         "vectors", "matrix_pattern", "matrix_handover", "near_null_space", "solver", "integrator", "output_files"]
RANK_PHASES = (PHASES[:5] + ["setup_" + n for n in SETUP] + ["before_steps", "assembly"] + SPLIT[:1]
               + ["assembly_local_cpu"] + SPLIT[1:] + ["pc_setup", "first_pc_setup", "ksp", "output", "total"])
MISSING_S = 0.02  # seconds of assembly the parts may leave uncounted beyond half of it (fixed costs, timer noise)
# The set-up's laps are contiguous intervals of one clock ending where the set-up's clock ends: they sum to the
# set-up but for the microseconds between the last lap and the clock's reading.
SETUP_TOLERANCE_S = 1e-3
# Before the first step: job + read + partition + distribute + setup, against the seconds from the run's start to
# the end of the set-up (measured on their own). The input phases are the reader's own timers, so the untimed
# moments between them (a few calls, one allreduce) may leave this much out.
BEFORE_STEPS_TOLERANCE_S, BEFORE_STEPS_TOLERANCE_REL = 0.02, 0.01


def check_per_rank(s, np, barriers):
    """phases_per_rank_s: every phase for every rank; rank 0's are phases_s; per rank the known phases fit in its
    total, and the assembly's parts (local work, matrix insertion, exchanges, diagnostic barriers) fit in its
    assembly and cover most of it (the rest: the residual's vector work outside the assembler)."""
    per_rank = s["phases_per_rank_s"]
    check(isinstance(per_rank, dict) and list(per_rank) == RANK_PHASES, f"phases_per_rank_s keys {per_rank and list(per_rank)}")
    check(all(isinstance(v, list) and len(v) == np for v in per_rank.values()), f"not one value per rank: {per_rank}")
    for p in PHASES + ["total"]:
        check(per_rank[p][0] == s["phases_s"][p], f"rank 0's {p} {per_rank[p][0]} != phases_s's {s['phases_s'][p]}")
    check(all(v is None for v in per_rank["assembly_barrier_wait"]) != barriers,
          f"assembly_barrier_wait {per_rank['assembly_barrier_wait']} with EDGEFEM_ASSEMBLY_BARRIERS "
          f"{'on' if barriers else 'off'}")
    for r in range(np):
        known = [per_rank[p][r] for p in PHASES if per_rank[p][r] is not None]
        check(all(t >= 0 for t in known) and sum(known) <= per_rank["total"][r], f"rank {r}: phases {known}")
        check_setup(per_rank, r)
        assembly = per_rank["assembly"][r]
        if assembly is None:
            continue
        parts = [per_rank[p][r] for p in SPLIT if per_rank[p][r] is not None]
        check(len(parts) == (4 if barriers else 3) and all(t >= 0 for t in parts), f"rank {r}: assembly parts {parts}")
        check(per_rank["assembly_local"][r] > 0 and per_rank["assembly_local_cpu"][r] > 0, f"rank {r}: no local work")
        # The rest (vector work, stage logging, boundary values) is a fixed cost per evaluation: on these meshes of a
        # few hundred tets it can be most of a few milliseconds, and one scheduler hiccup on a loaded machine doubles
        # it (CI once saw parts 3.2 ms of 7.9 ms). Hence "most of it" with an absolute allowance of MISSING_S.
        check(0.5 * assembly - MISSING_S <= sum(parts) <= assembly * (1 + 1e-6) + 1e-6,
              f"rank {r}: assembly parts {parts} sum to {sum(parts)}, not within [0.5 x assembly - {MISSING_S} s, "
              f"assembly] for assembly {assembly}")


def check_setup(per_rank, r):
    """Rank r's set-up laps sum to its set-up, and the phases before the first step to the seconds before it."""
    laps = [per_rank["setup_" + n][r] for n in SETUP]
    check(all(isinstance(t, (int, float)) and t >= 0 for t in laps), f"rank {r}: set-up laps {laps}")
    setup = per_rank["setup"][r]
    check(abs(sum(laps) - setup) <= SETUP_TOLERANCE_S,
          f"rank {r}: set-up laps sum to {sum(laps)} s, set-up {setup} s (tolerance {SETUP_TOLERANCE_S} s)")
    before = sum(per_rank[p][r] for p in ["job", "read", "partition", "distribute", "setup"])
    measured = per_rank["before_steps"][r]
    check(before <= measured + 1e-6
          and measured - before <= BEFORE_STEPS_TOLERANCE_S + BEFORE_STEPS_TOLERANCE_REL * measured,
          f"rank {r}: job + read + partition + distribute + setup = {before} s, before the first step {measured} s")
    first_pc, pc = per_rank["first_pc_setup"][r], per_rank["pc_setup"][r]
    check(first_pc is not None and 0 < first_pc <= pc * (1 + 1e-9), f"rank {r}: first PC set-up {first_pc}, all {pc}")


def fail(message):
    print(f"check_summary: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--edgefem", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--expect", choices=["ok", "error"], default="ok")
    parser.add_argument("--analysis", choices=["static", "dynamic"])
    parser.add_argument("--vertices", type=int)
    parser.add_argument("--cells", type=int)
    parser.add_argument("--cell-kind", choices=["tet", "triangle"])
    parser.add_argument("--message", default="")
    parser.add_argument("--restart-from-end-time", type=float)
    parser.add_argument("--assembly-barriers", action="store_true", help="run with EDGEFEM_ASSEMBLY_BARRIERS=1")
    parser.add_argument("run", nargs=argparse.REMAINDER)
    a = parser.parse_args()
    run_args = a.run[1:] if a.run[:1] == ["--"] else a.run
    check(run_args, "no job given")

    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(a.out)
    summary_path = os.path.join(a.out, "summary.json")
    first_step = 0
    if a.restart_from_end_time is not None:
        with open(run_args[0]) as f:
            text = f.read()
        first_job = a.out.rstrip("/") + ".first.yaml"
        text, n = re.subn(r"end_time: *[0-9.eE+-]+", f"end_time: {a.restart_from_end_time}", text)
        check(n == 1, f"{run_args[0]}: no single 'end_time:' to replace")
        with open(first_job, "w") as f:
            f.write(text)
        first = [a.mpiexec, "-n", str(a.np), "--oversubscribe", a.edgefem, "run", first_job, "--quiet", "--output", a.out]
        print("first run:", " ".join(first), flush=True)
        done = subprocess.run(first, capture_output=True, text=True, timeout=600)
        check(done.returncode == 0, f"the first run failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        with open(summary_path) as f:
            first_summary = json.load(f)
        first_step = first_summary["analysis"]["steps"]
        check(first_step > 0 and first_summary["analysis"]["restart"] is None, f"first run: {first_summary['analysis']}")
        run_args = run_args + ["--restart", a.out]
    with open(summary_path, "w") as stale:
        stale.write('{"stale": true}\n')

    command = [a.mpiexec, "-n", str(a.np), "--oversubscribe", a.edgefem, "run", *run_args, "--output", a.out]
    print("running:", " ".join(command), flush=True)
    env = dict(os.environ)
    env.pop("EDGEFEM_ASSEMBLY_BARRIERS", None)
    if a.assembly_barriers:
        env["EDGEFEM_ASSEMBLY_BARRIERS"] = "1"
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    print(proc.stdout[-3000:])
    print(proc.stderr[-3000:], file=sys.stderr)

    leftovers = [f for f in os.listdir(a.out) if f.startswith("summary.json") and f != "summary.json"]
    check(not leftovers, f"temporary files left in {a.out}: {leftovers}")
    check(os.path.exists(summary_path), f"{summary_path} missing")
    with open(summary_path) as f:
        s = json.load(f)  # fails on invalid JSON (and a NaN/Infinity would be rejected below by the type checks)
    print(json.dumps(s, indent=1)[:4000])
    check("stale" not in s, "the stale summary.json was not replaced")

    check(s["schema"] == "edgefem-summary/1", f"schema {s['schema']!r}")
    check(isinstance(s["version"], str) and re.fullmatch(r"\d+\.\d+\.\d+", s["version"]), f"version {s['version']!r}")
    check(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", s["started"]), f"started {s['started']!r}")
    check(" run " in s["command"] and s["command"].split()[0].endswith("edgefem"), f"command {s['command']!r}")
    check(os.path.samefile(s["job"], run_args[0]), f"job {s['job']!r} is not {run_args[0]!r}")
    check(s["ranks"] == a.np, f"ranks {s['ranks']} != {a.np}")
    # The provenance block (run/provenance.hpp): the same version, the libraries' versions, the hosts.
    p = s["provenance"]
    check(isinstance(p, dict) and p["version"] == s["version"] and p["ranks"] == a.np, f"provenance {p}")
    check(all(isinstance(p[k], str) and p[k] for k in ("git_describe", "petsc", "mpi", "vtk", "metis")),
          f"provenance versions {p}")
    check(isinstance(p["hosts"], list) and len(p["hosts"]) >= 1 and len(set(p["hosts"])) == len(p["hosts"]),
          f"provenance hosts {p['hosts']}")
    check(p["threads_per_rank"] == s["threads_per_rank"], f"provenance threads {p['threads_per_rank']}")
    check(s["threads_per_rank"] == int(os.environ.get("OMP_NUM_THREADS", s["threads_per_rank"])),
          f"threads_per_rank {s['threads_per_rank']}")
    check(isinstance(s["oversubscribed"], bool), "oversubscribed is not a bool")
    if a.analysis:
        check(s["analysis"]["type"] == a.analysis, f"analysis {s['analysis']}")

    phases = s["phases_s"]
    check(set(phases) == set(PHASES + ["total", "before_steps"]), f"phases_s keys {sorted(phases)}")
    check(isinstance(phases["total"], (int, float)) and phases["total"] > 0, f"total {phases['total']}")
    known = [phases[p] for p in PHASES if phases[p] is not None]
    check(all(isinstance(t, (int, float)) and t >= 0 for t in known), f"a negative or non-numeric phase: {phases}")
    check(sum(known) <= phases["total"], f"phases sum to {sum(known)} > total {phases['total']}")

    if a.expect == "error":
        check(proc.returncode != 0, "the run succeeded")
        check(s["status"] == "error", f"status {s['status']!r}")
        check(s["exit_code"] == proc.returncode, f"exit_code {s['exit_code']} != the exit status {proc.returncode}")
        check(isinstance(s["error"], str) and s["error"], f"error {s['error']!r}")
        check(a.message in s["error"], f"error {s['error']!r} does not contain {a.message!r}")
        check(s["error"].splitlines()[0] in proc.stderr, "the summary's message is not the one printed")
        print("check_summary: error summary OK")
        return

    check(proc.returncode == 0, f"edgefem exited with {proc.returncode}")
    check(s["status"] == "ok" and s["exit_code"] == 0 and s["error"] is None, "status/exit_code/error")
    check(all(phases[p] is not None for p in PHASES), f"a phase is missing: {phases}")
    check_per_rank(s, a.np, a.assembly_barriers)
    split = s["setup_split_s"]
    check(isinstance(split, dict) and list(split) == SETUP, f"setup_split_s keys {split and list(split)}")
    check(all(split[n] == s["phases_per_rank_s"]["setup_" + n][0] for n in SETUP), "setup_split_s is not rank 0's")
    check(s["first_pc_setup_s"] == s["phases_per_rank_s"]["first_pc_setup"][0], "first_pc_setup_s is not rank 0's")
    cpu = s["setup_split_cpu_s"]
    check(isinstance(cpu, dict) and list(cpu) == SETUP and all(t >= 0 for t in cpu.values()), f"setup_split_cpu_s {cpu}")
    # The CPU laps count every thread of the process: the OpenMP threads and MPI's own (mostly asleep) helper
    # thread, so at most (threads + 1) x wall, with 20 ms for the clocks' reading order.
    threads = s["threads_per_rank"] + 1
    check(all(cpu[n] <= threads * split[n] + 0.02 for n in SETUP), f"CPU laps {cpu} above {threads} x wall {split}")
    check(sum(cpu.values()) > 0, "no CPU time in the set-up")
    printed = re.search(r"set-up: ([0-9.]+) s, slowest rank per part: .*; first PC set-up ([0-9.]+) s", proc.stdout)
    top = max(s["phases_per_rank_s"]["setup"])
    check(printed and abs(float(printed[1]) - top) <= 0.0005 + 1e-9, f"printed set-up line != the slowest rank's {top}")

    mesh = s["mesh"]
    if a.vertices is not None:
        check(mesh["vertices"] == a.vertices, f"vertices {mesh['vertices']} != {a.vertices}")
    if a.cells is not None:
        check(mesh["cells"] == a.cells, f"cells {mesh['cells']} != {a.cells}")
    if a.cell_kind:
        check(mesh["cell_kind"] == a.cell_kind, f"cell_kind {mesh['cell_kind']}")
    check(mesh["dofs"] == 3 * mesh["vertices"], f"dofs {mesh['dofs']}")
    printed = re.search(r"mesh: (\d+) vertices, (\d+) ", proc.stdout)
    check(printed and (int(printed[1]), int(printed[2])) == (mesh["vertices"], mesh["cells"]), "counts != printed")

    part = s["partition"]
    owned, ghost = part["owned_vertices"], part["ghost_vertices"]
    check(part["method"] == "metis", f"method {part['method']}")
    check(math.isclose(owned["mean"] * a.np, mesh["vertices"]), f"owned vertices {owned} do not sum to the mesh's")
    check(owned["min"] <= owned["mean"] <= owned["max"] and ghost["min"] <= ghost["mean"] <= ghost["max"], "spread")
    check(ghost["min"] >= 0 and (a.np > 1 or ghost["max"] == 0), f"ghost vertices {ghost}")
    cells = part["cells"]
    check(math.isclose(cells["mean"] * a.np, mesh["cells"]) and cells["min"] <= cells["mean"] <= cells["max"],
          f"cells per rank {cells} do not sum to the mesh's {mesh['cells']}")

    solver = s["solver"]
    check(solver["newton_iterations"] > 0 and solver["ksp_iterations"] > 0, f"solver {solver}")
    check(solver["pc_setups"] > 0 and solver["preconditioner"], f"solver {solver}")
    printed = re.search(r"solver: (\d+) Newton iterations, (\d+) KSP iterations", proc.stdout)
    check(printed and (int(printed[1]), int(printed[2])) == (solver["newton_iterations"], solver["ksp_iterations"]),
          "iterations != printed")

    memory = s["memory"]
    per_rank = memory["peak_mb_per_rank"]
    check(len(per_rank) == a.np and all(m > 1 for m in per_rank), f"peak_mb_per_rank {per_rank}")
    check(memory["peak_mb_max_rank"] == max(per_rank), "peak_mb_max_rank != max")
    check(math.isclose(memory["peak_mb_total"], sum(per_rank), rel_tol=1e-6), "peak_mb_total != sum")

    d = s["largest_displacement"]
    check(math.isclose(math.hypot(*d["u"]), d["magnitude"], rel_tol=1e-12), f"|u| != magnitude: {d}")
    printed = re.search(r"largest displacement \|u\| = (\S+)", proc.stdout)
    check(printed and math.isclose(float(printed[1]), d["magnitude"], rel_tol=1e-8), "magnitude != printed")
    check(d["magnitude"] > 0, "nothing moved")
    check(s["output"] and os.path.exists(s["output"]) and s["output"].endswith(".pvd"), f"output {s['output']!r}")
    # Where the output's time went (ResultWriter's phases): every written step counted, each phase's time at least
    # 0, the run's own share (writer_* phases aside, which ran beside it) within phases_s.output.
    split = s["output_split"]
    written = open(s["output"]).read().count("<DataSet ")
    # (a restart lists the steps before it too: this run wrote at most those listed)
    check(split["format"] == "vtu" and 0 < split["written_steps"] <= written, f"output_split {split} vs {written} steps")
    check(all(split["wall_s"][k] >= 0 and split["cpu_s"][k] >= 0 for k in split["wall_s"]), f"output_split {split}")
    check(split["calls"]["arrays"] == split["written_steps"] and "writer_vtu" in split["wall_s"], f"output_split {split}")
    check(0 < split["in_run_wall_s"] <= s["phases_s"]["output"] * (1 + 1e-6), f"output_split {split}")

    analysis = s["analysis"]
    if analysis["type"] == "static":
        check(analysis["steps"] == analysis["load_steps"] > 0 and analysis["load_factor"] == 1, f"{analysis}")
    else:
        check(analysis["steps"] == analysis["time_steps"] - analysis["first_step"] > 0, f"{analysis}")
        check(analysis["first_step"] == first_step, f"first_step {analysis['first_step']} != {first_step}")
        if a.restart_from_end_time is not None:
            check(re.search(r"checkpoint_0*%d\.ckpt$" % first_step, analysis["restart"] or ""), f"{analysis}")
        else:
            check(analysis["restart"] is None, f"{analysis}")
        check(math.isclose(analysis["time"], analysis["end_time"]) and analysis["steps_cut"] >= 0, f"{analysis}")
    print("check_summary: summary OK")


if __name__ == "__main__":
    main()
