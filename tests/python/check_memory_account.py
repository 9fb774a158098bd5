#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The memory account of summary.json (run/memory_account.hpp, issue 56) against the measured peak:

  check_memory_account.py --mpiexec M --np N --edgefem E --gmsh G --out DIR GEO

Meshes GEO (jobs/bench/meshes/cantilever.geo) with Gmsh at h = 0.15 (--h; 14,576 tets with Gmsh 4.8: thousands of
tets, whose structures outweigh the growth of the process's own libraries and MPI buffers on 1 rank; 2 and 3 ranks
take h = 0.1, 47,854 tets: at h = 0.15 a rank's 5,000-7,000 tets leave PETSc's per-rank scatters and products about
10 % of its growth, and the account read 0.90-0.91 of the peak on 2 ranks) and runs the bench cantilever's job (StVK, gravity, 4 load steps) on it. Checks, per rank and over all
ranks, that the account's total above start-up (every structure + the transients) is within 10 % of the measured peak
above start-up (ru_maxrss less the resident set at start-up); that the structures a Newton run holds are all there and
positive (mesh, kernel data, insertion maps, matrix, block and symmetric copies, multigrid operators, Krylov and
Newton vectors, solver vectors) and the COO values 0 (they live from an evaluation to the matrix's hand-over only:
the account is taken after the solve); that the heap in use that no structure names is under 15 % of the growth
(measured: 8 % on 1 rank, 10 % on 2: PETSc's scatters and products' intermediate data);
that the kernel data per tet is that of the StVK TSEP lists (300 to 1500 bytes); and that the phases' resident sets
never exceed the peak.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

TOLERANCE = 0.10
UNNAMED = 0.15  # the heap in use no structure names, as a share of the growth (2 ranks: PETSc's scatters and products)
STRUCTURES = ["mesh", "kernel data", "insertion maps", "matrix", "block and symmetric copies",
              "multigrid operators", "Krylov and Newton vectors", "solver vectors"]

JOB = """mesh:
  file: {mesh}
materials:
  - region: 1
    model: stvk
    young: 1.0e4
    poisson: 0.3
    density: 1.0
    volumetric: none
boundary:
  - select: {{region: 11}}
    fix: [x, y, z]
loads:
  gravity: [0, 0, -1.0]
analysis:
  type: static
  steps: 4
solver:
  newton: {{rtol: 1.0e-10, atol: 1.0e-12, max_it: 30}}
output:
  directory: {out}/result
"""


def fail(message):
    print(f"check_memory_account: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def main():
    p = argparse.ArgumentParser()
    for a in ("--mpiexec", "--edgefem", "--gmsh", "--out"):
        p.add_argument(a, required=True)
    p.add_argument("--np", type=int, required=True)
    p.add_argument("--h", type=float, default=0.15, help="Gmsh's mesh size (0.15: 14,576 tets; 0.1: 47,854)")
    p.add_argument("geo")
    args = p.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    mesh = os.path.join(args.out, f"cantilever_h{args.h}.msh")
    g = subprocess.run([args.gmsh, "-3", "-setnumber", "h", str(args.h), args.geo, "-format", "msh41", "-bin", "-o", mesh],
                       capture_output=True, text=True, timeout=300)
    check(g.returncode == 0 and os.path.isfile(mesh), f"gmsh failed:\n{g.stdout}{g.stderr}")
    job = os.path.join(args.out, "cantilever.yaml")
    with open(job, "w") as f:
        f.write(JOB.format(mesh=mesh, out=args.out))
    r = subprocess.run([args.mpiexec, "-n", str(args.np), "--oversubscribe", args.edgefem, "run", job],
                       capture_output=True, text=True, timeout=600)
    check(r.returncode == 0, f"the run failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    with open(os.path.join(args.out, "result", "summary.json")) as f:
        s = json.load(f)
    memory = s["memory"]
    a = memory["account"]
    check(a is not None, "no memory.account in summary.json")
    tets = s["mesh"]["cells"]
    expected = {0.15: 14576, 0.1: 47854}.get(args.h)
    check(expected is None or abs(tets - expected) <= 0.1 * expected, f"the mesh has {tets} tets, expected {expected}")
    peaks = memory["peak_mb_per_rank"]
    totals = a["total_mb_per_rank"]
    check(len(peaks) == args.np and len(totals) == args.np, f"not one peak and total per rank: {peaks} {totals}")
    start = a["phases"][0]
    check(start["phase"] == "start-up", f"the first phase is {start['phase']}, not start-up")
    starts = start["resident_mb_per_rank"]
    for rank in range(args.np):
        grown, counted = peaks[rank] - starts[rank], totals[rank] - starts[rank]
        check(grown > 0, f"rank {rank}: peak {peaks[rank]} MB not above its start-up {starts[rank]} MB")
        check(abs(counted / grown - 1) <= TOLERANCE,
              f"rank {rank}: the account above start-up {counted:.1f} MB is not within {TOLERANCE:.0%} of the peak "
              f"above start-up {grown:.1f} MB")
        for ph in a["phases"]:
            check(ph["resident_mb_per_rank"][rank] <= peaks[rank] + 0.5,
                  f"rank {rank}: phase {ph['phase']} resident {ph['resident_mb_per_rank'][rank]} MB above the peak")
    grown_all = sum(peaks) - a["start_up_mb"]
    counted_all = a["total_mb"] - a["start_up_mb"]
    check(abs(counted_all / grown_all - 1) <= TOLERANCE,
          f"all ranks: the account above start-up {counted_all:.1f} MB vs the peak above start-up {grown_all:.1f} MB")
    structures = a["structures_mb"]
    for name in STRUCTURES:
        check(structures.get(name, 0) > 0, f"structure '{name}' missing or 0: {structures}")
    check(a["unaccounted_heap_mb"] <= UNNAMED * grown_all,
          f"{a['unaccounted_heap_mb']:.1f} MB of heap in use that no structure names (growth {grown_all:.1f} MB)")
    check(structures.get("COO values") == 0, f"COO values {structures.get('COO values')} MB after the solve, not 0 "
          "(freed once handed over to PETSc)")
    kernel = a["bytes_per_cell"]["kernel data"]
    check(300 <= kernel <= 1500, f"kernel data {kernel} bytes per tet, expected the StVK TSEP lists' 300-1500")
    print(f"check_memory_account: {args.np} rank(s), {tets} tets: peak above start-up {grown_all:.1f} MB, account "
          f"{counted_all:.1f} MB ({counted_all / grown_all:.3f}), unaccounted heap {a['unaccounted_heap_mb']:.1f} MB, "
          f"{a['peak_above_start_up_bytes_per_cell']:.0f} bytes per tet")
    print("check_memory_account: account OK")


if __name__ == "__main__":
    main()
