#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""jobs/scaling/study.py on a tiny generated job (tests/data/cantilever_small.yaml, 480 tets): strong and weak
scaling on 1 and 2 ranks (results.csv rows and values, the two PNGs), the Slurm array script, and the errors (a bad
--ranks list, a weak study of a file mesh, a missing executable, a failed run).

  test_study.py --edgefem PATH --mpiexec PATH --out DIR
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
STUDY = os.path.join(REPO, "jobs", "scaling", "study.py")
JOB = os.path.join(REPO, "tests", "data", "cantilever_small.yaml")
PHASES = ["read", "partition", "distribute", "setup", "assembly", "pc_setup", "ksp", "output"]


def fail(message):
    print(f"test_study: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def study(*args, expect=0, message=None):
    command = [sys.executable, STUDY, *args]
    print("running:", " ".join(command), flush=True)
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    print(proc.stdout[-4000:])
    print(proc.stderr[-4000:], file=sys.stderr)
    if expect == 0:
        check(proc.returncode == 0, f"study.py exited with {proc.returncode}")
    else:
        check(proc.returncode != 0, "study.py succeeded where it should fail")
        check(message in proc.stderr, f"the error does not say {message!r}")
    return proc


def check_study(out, kind, cells, oversubscribed):
    with open(os.path.join(out, "results.csv")) as f:
        rows = list(csv.DictReader(f))
    check([(r["kind"], int(r["ranks"]), int(r["threads"])) for r in rows] == [(kind, 1, 1), (kind, 2, 1)],
          f"{kind}: rows {[(r['kind'], r['ranks'], r['threads']) for r in rows]}")
    for r, n, over in zip(rows, cells, oversubscribed):
        check(int(r["cells"]) == n, f"{kind}: cells {r['cells']} != {n}")
        check(float(r["cells_per_rank"]) == n / int(r["ranks"]), f"{kind}: cells_per_rank {r['cells_per_rank']}")
        check(int(r["oversubscribed"]) == over, f"{kind} r{r['ranks']}: oversubscribed {r['oversubscribed']}")
        check(r["status"] == "ok" and int(r["newton_iterations"]) > 0 and int(r["ksp_iterations"]) > 0, f"{r}")
        phases = [float(r[p + "_s"]) for p in PHASES]
        check(all(t >= 0 for t in phases) and 0 < sum(phases) <= float(r["total_s"]), f"{kind}: phases {r}")
        check(float(r["peak_mb_max_rank"]) > 1, f"{r}")
        # The assembly's split (phases_per_rank_s): the slowest rank's local work, its imbalance, the rest.
        local, wait = float(r["assembly_local_max_s"]), float(r["assembly_wait_s"])
        check(0 < local and float(r["assembly_local_imbalance"]) >= 1, f"{kind}: assembly split {r}")
        check(float(r["assembly_local_cpu_max_s"]) > 0, f"{kind}: assembly_local_cpu_max_s {r}")
        check(float(r["assembly_insertion_max_s"]) >= 0 and float(r["assembly_exchange_max_s"]) >= 0, f"{r}")
        check(wait >= 0 and r["assembly_barrier_wait_max_s"] == "", f"{kind}: assembly wait/barriers {r}")
        check(float(r["peak_mb_total"]) >= float(r["peak_mb_max_rank"]), f"{r}")
        check(os.path.isfile(os.path.join(out, "runs", r["run"], "edgefem.log")), f"no log for {r['run']}")
    check(int(rows[1]["dofs"]) == int(rows[0]["dofs"]) if kind == "strong" else int(rows[1]["dofs"]) > int(rows[0]["dofs"]),
          f"{kind}: dofs {rows[0]['dofs']}, {rows[1]['dofs']}")
    for png in ("speedup.png", "efficiency.png"):
        path = os.path.join(out, png)
        with open(path, "rb") as f:
            check(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG")
        check(os.path.getsize(path) > 10000, f"{path} is nearly empty")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--edgefem", required=True)
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--out", required=True)
    a = parser.parse_args()
    shutil.rmtree(a.out, ignore_errors=True)
    common = ["--edgefem", a.edgefem, "--mpiexec", a.mpiexec]

    # Strong, with --cores 1: the 2-rank run is oversubscribed (--oversubscribe --bind-to none) and marked so.
    strong = os.path.join(a.out, "strong")
    proc = study("--job", JOB, "--ranks", "1,2", "--threads", "1", "--kind", "strong", "--out", strong, "--cores", "1",
                 *common)
    check_study(strong, "strong", [480, 480], [0, 1])
    # The default warm-up: one untimed run of the first configuration, not in results.csv; one run each: no spread.
    check("warm-up run 1 of 1 (strong_r1_t1, untimed" in proc.stdout, "no warm-up run")
    check(os.path.isfile(os.path.join(strong, "runs", "warmup_1", "out", "summary.json")), "no warm-up output")
    check("study: warning: 2 ranks x 1 thread(s): t(1)/t(2) = " in proc.stdout and
          "from one run each: no spread to judge it by" in proc.stdout, "no warning about the missing spread")
    # Weak: the longest cell count doubles on 2 ranks (cells [20, 2, 2] -> [40, 2, 2]), 480 tets per rank.
    weak = os.path.join(a.out, "weak")
    proc = study("--job", JOB, "--ranks", "1,2", "--kind", "weak", "--out", weak, "--cores", "2", "--warmup", "0",
                 *common)
    check("warm-up" not in proc.stdout and not os.path.exists(os.path.join(weak, "runs", "warmup_1")), "--warmup 0")
    check("weak_r2_t1: 2 rank(s) x 1 thread(s), 960 cells, 480.0 cells per rank" in proc.stdout, "cells per rank")
    check_study(weak, "weak", [480, 960], [0, 0])
    # --collect again reproduces results.csv.
    with open(os.path.join(weak, "results.csv")) as f:
        first = f.read()
    study("--collect", weak)
    with open(os.path.join(weak, "results.csv")) as f:
        check(f.read() == first, "--collect wrote another results.csv")

    # --repeat 2: every configuration twice, in rounds, the second in reverse order; one CSV row per run with its
    # configuration's min/median/max total; the plots from the medians.
    repeated = os.path.join(a.out, "repeat")
    proc = study("--job", JOB, "--ranks", "1,2", "--kind", "strong", "--out", repeated, "--cores", "2", "--repeat",
                 "2", "--warmup", "0", *common)
    with open(os.path.join(repeated, "results.csv")) as f:
        rows = list(csv.DictReader(f))
    check([(int(r["ranks"]), int(r["repeat"]), r["run"]) for r in rows] ==
          [(1, 1, "strong_r1_t1_1"), (2, 1, "strong_r2_t1_1"), (2, 2, "strong_r2_t1_2"), (1, 2, "strong_r1_t1_2")],
          f"--repeat 2 rows {[(r['ranks'], r['repeat'], r['run']) for r in rows]}")
    check(all(r["status"] == "ok" and float(r["total_s"]) > 0 for r in rows), "--repeat 2: a run is not ok")
    for ranks in (1, 2):
        mine = [r for r in rows if int(r["ranks"]) == ranks]
        totals = sorted(float(r["total_s"]) for r in mine)
        for r in mine:
            check(int(r["runs"]) == 2 and float(r["total_min_s"]) == totals[0] and
                  float(r["total_max_s"]) == totals[1] and
                  abs(float(r["total_median_s"]) - 0.5 * (totals[0] + totals[1])) < 1e-9 * totals[1],
                  f"--repeat 2: spread columns of {r}")
        check(f"study: {ranks} rank(s) x 1 thread(s): total min/median/max {totals[0]:.3f}/" in proc.stdout,
              f"--repeat 2: no spread line for {ranks} rank(s)")
    for png in ("speedup.png", "efficiency.png"):
        check(os.path.getsize(os.path.join(repeated, png)) > 10000, f"--repeat 2: {png} missing or nearly empty")
    study("--job", JOB, "--ranks", "1", "--kind", "strong", "--out", repeated, "--repeat", "0", *common, expect=1,
          message="--repeat: expected a positive integer, got 0")

    # Slurm: an array job with one task per configuration (nothing runs).
    slurm = os.path.join(a.out, "slurm")
    study("--job", JOB, "--ranks", "1,2,4", "--threads", "1,2", "--kind", "strong", "--out", slurm, "--slurm",
          "--edgefem", a.edgefem)
    script = os.path.join(slurm, "study.sbatch")
    with open(script) as f:
        text = f.read()
    for line in ["#SBATCH --array=0-5", "#SBATCH --ntasks=4", "#SBATCH --cpus-per-task=2", "ranks=(1 1 2 2 4 4)",
                 "threads=(1 2 1 2 1 2)", "--cpu-bind=cores", "--collect"]:
        check(line in text, f"{script} lacks {line!r}")
    check(subprocess.run(["bash", "-n", script]).returncode == 0, f"{script} is not valid bash")
    study("--collect", slurm, expect=1, message="strong_r1_t1/edgefem.log")

    # Errors.
    bad = os.path.join(a.out, "bad")
    study("--job", JOB, "--ranks", "1,two", "--kind", "strong", "--out", bad, *common, expect=1,
          message="--ranks: expected a comma-separated list of positive integers (e.g. 1,2,4), got '1,two'")
    study("--job", JOB, "--ranks", "1", "--threads", "0", "--kind", "strong", "--out", bad, *common, expect=1,
          message="--threads: expected")
    study("--job", os.path.join(REPO, "jobs", "examples", "column.yaml"), "--ranks", "1,2", "--kind", "weak", "--out",
          bad, *common, expect=1, message="reads its mesh from a file; weak scaling needs a generated mesh")
    study("--job", JOB, "--ranks", "1", "--kind", "strong", "--out", bad, "--edgefem", os.path.join(a.out, "none"),
          expect=1, message="is not an executable file")
    failed = os.path.join(a.out, "failed")
    study("--job", os.path.join(REPO, "tests", "data", "bad_young.yaml"), "--ranks", "1", "--kind", "strong", "--out",
          failed, "--warmup", "0", *common, expect=1,
          message=f"run strong_r1_t1 failed (exit status 1): see {failed}/runs/strong_r1_t1/edgefem.log")
    print("test_study: OK")


if __name__ == "__main__":
    main()
