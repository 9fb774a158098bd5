#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Strong and weak scaling studies of edgefem (docs/guide/scaling-studies.md "Scaling studies").

  study.py --job JOB --ranks 1,2,4 --threads 1,2 --kind strong|weak --out DIR [--repeat N] [--edgefem PATH] [--slurm]
  study.py --collect DIR

Runs `edgefem run` once per (ranks, threads) configuration, each in DIR/runs/<kind>_r<R>_t<T>/ (its output in
out/, its log in edgefem.log), then collects the runs' out/summary.json into DIR/results.csv and draws
DIR/speedup.png and DIR/efficiency.png. Before the timed runs, --warmup N (default 1) untimed runs of the first
configuration (DIR/runs/warmup_<k>/, not in the CSV) load the executable, the libraries and the mesh file into the
caches, so that the first timed run does not pay a cold start. --repeat N runs every configuration N times (in
rounds, every other round in reverse order, so that a drift of the machine's speed or a run's cost for the next one
touches every configuration alike), in DIR/runs/<kind>_r<R>_t<T>_<k>/; the CSV has a row per run (column `repeat`)
with its configuration's min/median/max total time and run count (total_min_s, total_median_s, total_max_s, runs),
the plots use each configuration's median per phase with min-max error bars on the total, and the study warns when
a configuration's spread is larger than the speed-up or slow-down it reports (or when there is no spread to judge
by: --repeat 1).

strong: the job as it is, for every configuration.
weak:   the job must generate its mesh (`mesh: generate:`); the cell counts grow with the rank count so that the cells
        per rank stay those of the job on the smallest rank count R0: --weak-scale longest (the default) multiplies
        the largest of the counts by R/R0 (the cells per rank stay exactly the same); --weak-scale all multiplies
        every count by (R/R0)^(1/3) for a box, (R/R0)^(1/2) for a sheet, rounded (the cell shape stays, the count
        per rank is near). The job copy is DIR/runs/<run>/job.yaml (relative file paths made absolute); the cells
        per rank of every run are printed and are in results.csv.

Locally each run is `mpirun -n R` with OMP_NUM_THREADS=T; when R x T exceeds the cores (--cores, default: the CPUs
this process may use) it adds --oversubscribe --bind-to none and marks the run oversubscribed in the CSV, otherwise
it binds each rank to T cores (--map-by slot:PE=T --bind-to core). --slurm writes DIR/study.sbatch instead, a Slurm
array job with one task per configuration (srun with --cpus-per-task and --cpu-bind=cores); submit it with sbatch,
then run `study.py --collect DIR`.

The executable: --edgefem, else $EDGEFEM, else build/edgefem (in the current directory, then in this repository),
else `edgefem` on the PATH.
"""
import argparse
import csv
import json
import math
import os
import shlex
import shutil
import subprocess
import sys

PHASES = ["read", "partition", "distribute", "setup", "assembly", "pc_setup", "ksp", "output"]
# From summary.json's phases_per_rank_s: the assembly's own work on the slowest rank and what the rest is.
# assembly_local_max: max over ranks of the local work (kernels, value scaling, copies: no communication);
# assembly_local_cpu_max: the same in process CPU time (on a busy machine: the work without the stolen time);
# assembly_local_imbalance: its max / mean over ranks; assembly_insertion_max, assembly_exchange_max: max over ranks of
# the matrix insertion and of the ghost updates/MatAssembly; assembly_wait: rank 0's assembly phase minus
# assembly_local_max (insertion, exchanges and the waits for the other ranks); assembly_barrier_wait_max: the
# diagnostic barriers (EDGEFEM_ASSEMBLY_BARRIERS=1), empty otherwise.
SPLIT = ["assembly_local_max", "assembly_local_cpu_max", "assembly_local_imbalance", "assembly_insertion_max", "assembly_exchange_max",
         "assembly_wait", "assembly_barrier_wait_max"]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLUMNS = (["kind", "ranks", "threads", "oversubscribed", "cells", "cells_per_rank", "dofs"] +
           [p + "_s" for p in PHASES] + ["total_s", "newton_iterations", "ksp_iterations", "peak_mb_max_rank",
                                         "peak_mb_total", "status", "repeat", "run"] +
           [p + ("" if p.endswith("imbalance") else "_s") for p in SPLIT] +
           ["total_min_s", "total_median_s", "total_max_s", "runs"])


class StudyError(Exception):
    pass


def positive_list(text, what):
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        values = []
    if not values or any(v < 1 for v in values):
        raise StudyError(f"--{what}: expected a comma-separated list of positive integers (e.g. 1,2,4), got '{text}'")
    if len(set(values)) != len(values):
        raise StudyError(f"--{what}: '{text}' lists a value twice")
    return sorted(values)


def find_edgefem(given):
    if given:
        candidates = [("--edgefem", given)]
    elif os.environ.get("EDGEFEM"):
        candidates = [("$EDGEFEM", os.environ["EDGEFEM"])]
    else:
        candidates = [("build/edgefem", os.path.join(os.getcwd(), "build", "edgefem")),
                      ("build/edgefem", os.path.join(REPO, "build", "edgefem"))]
        on_path = shutil.which("edgefem")
        if on_path:
            candidates.append(("edgefem on the PATH", on_path))
    for _, path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return os.path.abspath(path)
    if given or os.environ.get("EDGEFEM"):
        what, path = candidates[0]
        raise StudyError(f"{what} = '{path}' is not an executable file")
    raise StudyError("no edgefem executable: give --edgefem PATH or set $EDGEFEM (looked for build/edgefem in "
                     f"{os.getcwd()} and {REPO}, and for edgefem on the PATH)")


def load_yaml(path):
    try:
        import yaml
    except ImportError:
        raise StudyError("the Python module yaml is missing (Debian: apt-get install python3-yaml; ./setup.sh does)")
    try:
        with open(path) as f:
            return yaml.safe_load(f)
    except OSError as e:
        raise StudyError(f"--job: cannot read '{path}': {e.strerror}")
    except yaml.YAMLError as e:
        raise StudyError(f"--job: '{path}' is not valid YAML: {e}")


def absolute_paths(node, job_dir):
    """The job tree with every string that names an existing file relative to the job's directory made absolute
    (the copy lives elsewhere; edgefem resolves relative paths against the job file's directory)."""
    if isinstance(node, dict):
        return {k: absolute_paths(v, job_dir) for k, v in node.items()}
    if isinstance(node, list):
        return [absolute_paths(v, job_dir) for v in node]
    if isinstance(node, str) and not os.path.isabs(node) and os.path.isfile(os.path.join(job_dir, node)):
        return os.path.join(job_dir, node)
    return node


def cells_of(shape, counts):
    """Cells edgefem generates: 6 tets per box cell, 2 triangles per sheet cell (mesh/box.cpp, io/job.cpp)."""
    n = 1
    for c in counts:
        n *= c
    return 6 * n if shape == "box" else 2 * n


def weak_counts(counts, factor, mode):
    """longest: the first largest count times the (whole) rank ratio; all: every count times its d-th root."""
    counts = list(counts)
    if mode == "longest":
        i = max(range(len(counts)), key=lambda k: counts[k])
        counts[i] *= factor
        return counts
    scale = factor ** (1.0 / len(counts))
    return [max(1, round(c * scale)) for c in counts]


def configurations(args):
    return [(r, t) for r in args.ranks for t in args.threads]


def run_name(kind, r, t, repeat=1, repeats=1):
    return f"{kind}_r{r}_t{t}" + (f"_{repeat}" if repeats > 1 else "")


def prepare(args):
    """Creates DIR/runs/<run>/ for every configuration (with the weak job copies) and DIR/study.json; returns the
    manifest."""
    job = os.path.abspath(args.job)
    tree = load_yaml(job)
    if not isinstance(tree, dict):
        raise StudyError(f"--job: '{job}' is not an edgefem job (a YAML mapping)")
    generate = (tree.get("mesh") or {}).get("generate") if isinstance(tree.get("mesh"), dict) else None
    shape, counts = None, None
    if generate is not None:
        shape = generate.get("shape", "box")
        counts = generate.get("cells")
        dims = {"box": 3, "sheet": 2}.get(shape)
        if dims is None or not (isinstance(counts, list) and len(counts) == dims and
                                all(isinstance(c, int) and c > 0 for c in counts)):
            raise StudyError(f"--job: '{job}': mesh.generate needs shape box with cells [nx, ny, nz] or shape sheet "
                             f"with cells [nx, ny] (got shape {shape!r}, cells {counts!r})")
    if args.kind == "weak" and generate is None:
        raise StudyError(f"--kind weak: '{job}' reads its mesh from a file; weak scaling needs a generated mesh "
                         "(mesh: generate: {shape, size, cells}) whose cell counts the study can grow with the ranks")
    os.makedirs(os.path.join(args.out, "runs"), exist_ok=True)
    r0 = args.ranks[0]
    runs = []
    rounds = [(k, c) for k in range(1, args.repeat + 1)
              for c in (configurations(args) if k % 2 else configurations(args)[::-1])]
    for k, (r, t) in rounds:
        name = run_name(args.kind, r, t, k, args.repeat)
        run_dir = os.path.join(args.out, "runs", name)
        os.makedirs(run_dir, exist_ok=True)
        run_job = job
        cells = cells_of(shape, counts) if counts else None
        if args.kind == "weak":
            if r % r0 != 0 and args.weak_scale == "longest":
                raise StudyError(f"--ranks: weak scaling with --weak-scale longest needs every rank count to be a "
                                 f"multiple of the smallest ({r0}); {r} is not (or use --weak-scale all)")
            scaled = weak_counts(counts, r // r0 if args.weak_scale == "longest" else r / r0, args.weak_scale)
            copy = absolute_paths(tree, os.path.dirname(job))
            copy["mesh"]["generate"]["cells"] = scaled
            run_job = os.path.join(run_dir, "job.yaml")
            import yaml
            with open(run_job, "w") as f:
                f.write(f"# {job} for the weak scaling study on {r} ranks: mesh.generate.cells {counts} -> {scaled}\n")
                yaml.safe_dump(copy, f, default_flow_style=None, sort_keys=False)
            cells = cells_of(shape, scaled)
        # (under Slurm the node is not this machine: the runs' own summaries say whether they were oversubscribed)
        runs.append({"name": name, "ranks": r, "threads": t, "repeat": k, "job": run_job, "cells": cells,
                     "oversubscribed": not args.slurm and r * t > args.cores})
    manifest = {"kind": args.kind, "job": job, "cores": args.cores, "runs": runs}
    with open(os.path.join(args.out, "study.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    for run in runs:
        per_rank = f"{run['cells'] / run['ranks']:.1f}" if run["cells"] else "?"
        print(f"study: {run['name']}: {run['ranks']} rank(s) x {run['threads']} thread(s), "
              f"{run['cells'] if run['cells'] else '?'} cells, {per_rank} cells per rank"
              f"{', oversubscribed (' + str(run['ranks'] * run['threads']) + ' threads > ' + str(args.cores) + ' cores)' if run['oversubscribed'] else ''}")
    return manifest


def run_locally(args, manifest, edgefem):
    first = manifest["runs"][0]
    for k in range(1, args.warmup + 1):
        warmup = dict(first, name=f"warmup_{k}")
        os.makedirs(os.path.join(args.out, "runs", warmup["name"]), exist_ok=True)
        print(f"study: warm-up run {k} of {args.warmup} ({first['name']}, untimed, not in results.csv)", flush=True)
        run_one(args, warmup, edgefem)
    for run in manifest["runs"]:
        run_one(args, run, edgefem)


def run_one(args, run, edgefem):
    run_dir = os.path.join(args.out, "runs", run["name"])
    out = os.path.join(run_dir, "out")
    log = os.path.join(run_dir, "edgefem.log")
    r, t = run["ranks"], run["threads"]
    command = [args.mpiexec, "-n", str(r)]
    if run["oversubscribed"]:
        command += ["--oversubscribe", "--bind-to", "none"]
    elif t > 1:
        command += ["--map-by", f"slot:PE={t}", "--bind-to", "core"]
    command += ["-x", "OMP_NUM_THREADS", edgefem, "run", run["job"], "--quiet", "--output", out] + args.edgefem_args
    env = dict(os.environ, OMP_NUM_THREADS=str(t))
    if os.geteuid() == 0:  # Open MPI refuses root without these
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    print(f"study: running {run['name']}: {shlex.join(command)}", flush=True)
    with open(log, "w") as f:
        f.write(f"# OMP_NUM_THREADS={t} {shlex.join(command)}\n")
        f.flush()
        try:
            code = subprocess.run(command, stdout=f, stderr=subprocess.STDOUT, env=env).returncode
        except OSError as e:
            raise StudyError(f"cannot start '{args.mpiexec}': {e.strerror} (give --mpiexec PATH)")
    if code != 0:
        raise StudyError(f"run {run['name']} failed (exit status {code}): see {log} (run directory {run_dir})")


def write_sbatch(args, manifest, edgefem):
    runs = manifest["runs"]
    max_r = max(r["ranks"] for r in runs)
    max_t = max(r["threads"] for r in runs)
    path = os.path.join(args.out, "study.sbatch")
    out = os.path.abspath(args.out)
    q = shlex.quote
    lines = [
        "#!/bin/bash",
        f"# {manifest['kind']} scaling study of {manifest['job']}, written by jobs/scaling/study.py:",
        f"#   sbatch {path}",
        f"#   then, when every task has finished: {os.path.abspath(__file__)} --collect {out}",
        "# One array task per configuration; each task asks for the largest configuration's resources (an array's",
        "# tasks share one request) and srun starts only its own ranks and threads. Add your site's --partition,",
        "# --account and --exclusive (for clean timings) here or on the sbatch command line.",
        f"#SBATCH --job-name=edgefem-{manifest['kind']}",
        f"#SBATCH --array=0-{len(runs) - 1}",
        "#SBATCH --nodes=1",
        f"#SBATCH --ntasks={max_r}",
        f"#SBATCH --cpus-per-task={max_t}",
        f"#SBATCH --time={args.time}",
        f"#SBATCH --output={out}/runs/slurm-%A_%a.out",
        "set -euo pipefail",
        "names=(" + " ".join(q(r["name"]) for r in runs) + ")",
        "ranks=(" + " ".join(str(r["ranks"]) for r in runs) + ")",
        "threads=(" + " ".join(str(r["threads"]) for r in runs) + ")",
        "jobs=(" + " ".join(q(r["job"]) for r in runs) + ")",
        "i=$SLURM_ARRAY_TASK_ID",
        f"run_dir={q(out)}/runs/${{names[$i]}}",
        "export OMP_NUM_THREADS=${threads[$i]} OMP_PROC_BIND=close OMP_PLACES=cores",
        f"echo \"# ${{names[$i]}}: srun --ntasks=${{ranks[$i]}} --cpus-per-task=${{threads[$i]}}\" > \"$run_dir/edgefem.log\"",
        "srun --ntasks=\"${ranks[$i]}\" --cpus-per-task=\"${threads[$i]}\" --cpu-bind=cores \\",
        f"  {q(edgefem)} run \"${{jobs[$i]}}\" --quiet --output \"$run_dir/out\" " +
        " ".join(q(a) for a in args.edgefem_args) + " >> \"$run_dir/edgefem.log\" 2>&1",
    ]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(path, 0o755)
    print(f"study: wrote {path} ({len(runs)} array tasks); submit it with `sbatch {path}`, then collect with "
          f"`{os.path.abspath(__file__)} --collect {out}`")


def collect(out):
    manifest_path = os.path.join(out, "study.json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except OSError:
        raise StudyError(f"--collect: {manifest_path} is missing: not a study directory (study.py --out writes it)")
    rows = []
    for run in manifest["runs"]:
        run_dir = os.path.join(out, "runs", run["name"])
        log = os.path.join(run_dir, "edgefem.log")
        path = os.path.join(run_dir, "out", "summary.json")
        try:
            with open(path) as f:
                s = json.load(f)
        except (OSError, ValueError) as e:
            raise StudyError(f"run {run['name']}: no readable {path} ({e}): the run did not finish; see {log}")
        if s.get("status") != "ok":
            raise StudyError(f"run {run['name']} failed (exit code {s.get('exit_code')}): {s.get('error')}; "
                             f"see {log} (run directory {run_dir})")
        phases = s["phases_s"]
        row = {"kind": manifest["kind"], "ranks": s["ranks"], "threads": s["threads_per_rank"],
               "oversubscribed": int(bool(run["oversubscribed"] or s["oversubscribed"])),
               "cells": s["mesh"]["cells"], "cells_per_rank": s["mesh"]["cells"] / s["ranks"],
               "dofs": s["mesh"]["dofs"]}
        for p in PHASES + ["total"]:
            row[p + "_s"] = phases[p]
        row.update(assembly_split(s))
        row.update(newton_iterations=s["solver"]["newton_iterations"], ksp_iterations=s["solver"]["ksp_iterations"],
                   peak_mb_max_rank=s["memory"]["peak_mb_max_rank"], peak_mb_total=s["memory"]["peak_mb_total"],
                   status=s["status"], repeat=run.get("repeat", 1), run=run["name"])
        if (row["ranks"], row["threads"]) != (run["ranks"], run["threads"]):
            raise StudyError(f"run {run['name']}: its summary says {row['ranks']} ranks x {row['threads']} threads")
        rows.append(row)
    spread(rows)
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"study: wrote {os.path.join(out, 'results.csv')} ({len(rows)} runs)")
    merged = medians(rows)
    for r in sorted(merged, key=lambda r: (r["threads"], r["ranks"])):
        print(f"study: {r['ranks']} rank(s) x {r['threads']} thread(s): total min/median/max "
              f"{r['total_min_s']:.3f}/{r['total_median_s']:.3f}/{r['total_max_s']:.3f} s ({r['runs']} runs)")
    for line in spread_warnings(manifest["kind"], merged):
        print(line)
    plot(out, manifest["kind"], merged)
    return rows


def median(values):
    values, n = sorted(values), len(values)
    return values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] + values[n // 2])


def spread(rows):
    """Adds each configuration's total_min_s, total_median_s, total_max_s and runs to its rows."""
    groups = {}
    for row in rows:
        groups.setdefault((row["ranks"], row["threads"]), []).append(row)
    for group in groups.values():
        totals = [g["total_s"] for g in group]
        for g in group:
            g.update(total_min_s=min(totals), total_median_s=median(totals), total_max_s=max(totals), runs=len(group))


def spread_warnings(kind, merged):
    """Warnings for the configurations whose speed-up (strong) or efficiency (weak) over the first rank count, from
    the median totals, is within the range the runs' min and max totals allow (the spread is larger than the
    effect), and for a study without repeats (no spread to judge by)."""
    lines = []
    for t in sorted({r["threads"] for r in merged}):
        mine = sorted((r for r in merged if r["threads"] == t), key=lambda r: r["ranks"])
        base = mine[0]
        for r in mine[1:]:
            n = r["ranks"] / base["ranks"]
            ideal_ratio = 1.0 if kind == "weak" else n  # what t0/t is with no parallel cost
            ratio = base["total_median_s"] / r["total_median_s"]
            low, high = base["total_min_s"] / r["total_max_s"], base["total_max_s"] / r["total_min_s"]
            what = f"{r['ranks']} ranks x {t} thread(s): t({base['ranks']})/t({r['ranks']}) = {ratio:.2f}"
            if max(base["runs"], r["runs"]) < 2:
                lines.append(f"study: warning: {what} from one run each: no spread to judge it by (use --repeat 3)")
            elif high - low > abs(ratio - 1.0) or (low <= 1.0 <= high and ideal_ratio != 1.0):
                lines.append(f"study: warning: {what}, but the runs allow {low:.2f} to {high:.2f} (min/max totals of "
                             f"{base['runs']} and {r['runs']} runs): the spread is larger than the effect; repeat "
                             "more (--repeat) or measure on a quieter machine")
    return lines


def assembly_split(summary):
    """The SPLIT columns of one run (None where the summary has no per-rank phases)."""
    out = {p + ("" if p.endswith("imbalance") else "_s"): None for p in SPLIT}
    per_rank = summary.get("phases_per_rank_s")
    if not per_rank or not per_rank.get("assembly_local") or None in per_rank["assembly_local"]:
        return out
    local = per_rank["assembly_local"]
    top = max(local)
    out["assembly_local_max_s"] = top
    mean = sum(local) / len(local)
    out["assembly_local_imbalance"] = top / mean if mean > 0 else None
    for p in ("local_cpu", "insertion", "exchange", "barrier_wait"):
        values = [v for v in per_rank.get("assembly_" + p) or [] if v is not None]
        out[f"assembly_{p}_max_s"] = max(values) if values else None
    if summary["phases_s"]["assembly"] is not None:
        out["assembly_wait_s"] = max(0.0, summary["phases_s"]["assembly"] - top)
    return out


def medians(rows):
    """One row per (ranks, threads): each number the median over the configuration's repeats."""
    groups = {}
    for row in rows:
        groups.setdefault((row["ranks"], row["threads"]), []).append(row)
    merged = []
    for group in groups.values():
        row = dict(group[0])
        for key, value in row.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and key not in ("ranks", "threads"):
                values = sorted(g[key] for g in group if g[key] is not None)
                n = len(values)
                if n:
                    row[key] = values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] + values[n // 2])
        row["oversubscribed"] = int(any(g["oversubscribed"] for g in group))
        row["runs"] = len(group)
        merged.append(row)
    return merged


def error_bars(ax, kind, what, mine):
    """The total's range over the runs: t0 min/max against t min/max (only with repeats)."""
    base = mine[0]
    if max(r["runs"] for r in mine) < 2:
        return
    x, y, low, high = [], [], [], []
    for r in mine:
        n = r["ranks"] / base["ranks"]
        scale = (1 / n if kind == "strong" else 1.0) if what == "efficiency" else (n if kind == "weak" else 1.0)
        mid = scale * base["total_median_s"] / r["total_median_s"]
        x.append(r["ranks"]), y.append(mid)
        low.append(mid - scale * base["total_min_s"] / r["total_max_s"])
        high.append(scale * base["total_max_s"] / r["total_min_s"] - mid)
    ax.errorbar(x, y, yerr=[low, high], fmt="none", ecolor="black", capsize=4, label="total: min-max of the runs")


def plot(out, kind, rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise StudyError("the Python module matplotlib is missing (Debian: apt-get install python3-matplotlib; "
                         f"./setup.sh does); results.csv is written, the plots are not. Python: {sys.executable}")
    threads = sorted({r["threads"] for r in rows})
    series = PHASES + ["assembly_local_max", "assembly_local_cpu_max", "total"]
    for what in ("speedup", "efficiency"):
        fig, axes = plt.subplots(1, len(threads), figsize=(6 * len(threads), 4.5), squeeze=False)
        for ax, t in zip(axes[0], threads):
            mine = sorted((r for r in rows if r["threads"] == t), key=lambda r: r["ranks"])
            base = mine[0]
            r0 = base["ranks"]
            ranks = [r["ranks"] for r in mine]
            for p in series:
                values = []
                for r in mine:
                    t0, tr = base.get(p + "_s"), r.get(p + "_s")
                    if not (t0 and tr and t0 > 0 and tr > 0):
                        values.append(math.nan)
                        continue
                    ratio = t0 / tr  # strong: the speedup over R0 ranks; weak: the efficiency t(R0)/t(R)
                    n = r["ranks"] / r0
                    if kind == "strong":
                        values.append(ratio if what == "speedup" else ratio / n)
                    else:
                        values.append(ratio * n if what == "speedup" else ratio)
                ax.plot(ranks, values, marker="o", label=p, linewidth=2.5 if p == "total" else 1.2,
                        color="black" if p == "total" else None)
            error_bars(ax, kind, what, mine)
            ideal = [r / r0 for r in ranks] if what == "speedup" else [1.0 for _ in ranks]
            ax.plot(ranks, ideal, linestyle=":", color="black", label="ideal")
            ax.set_xticks(ranks)
            ax.set_xlabel("ranks" + (" (shaded: oversubscribed, ranks x threads > cores)"
                                     if any(r["oversubscribed"] for r in mine) else ""))
            for r in mine:
                if r["oversubscribed"]:
                    ax.axvspan(r["ranks"] - 0.15, r["ranks"] + 0.15, color="red", alpha=0.12)
            if kind == "strong":
                ax.set_ylabel(f"speedup over {r0} rank(s)" if what == "speedup" else "parallel efficiency")
            else:
                ax.set_ylabel(f"scaled speedup R t({r0})/t(R)" if what == "speedup" else f"efficiency t({r0})/t(R)")
            n_runs = max(r.get("runs", 1) for r in mine)
            ax.set_title(f"{kind} scaling, {t} thread(s) per rank" + (f" (medians of {n_runs} runs)" if n_runs > 1 else ""))
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        path = os.path.join(out, what + ".png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        print(f"study: wrote {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--job", help="the edgefem job file")
    parser.add_argument("--ranks", help="rank counts, e.g. 1,2,4")
    parser.add_argument("--threads", default="1", help="OpenMP threads per rank, e.g. 1,2 (default 1)")
    parser.add_argument("--kind", choices=["strong", "weak"])
    parser.add_argument("--out", help="the study directory")
    parser.add_argument("--edgefem", help="the edgefem executable")
    parser.add_argument("--slurm", action="store_true", help="write DIR/study.sbatch instead of running")
    parser.add_argument("--collect", metavar="DIR", help="only collect DIR's runs into results.csv and the plots")
    parser.add_argument("--weak-scale", choices=["longest", "all"], default="longest",
                        help="weak: grow the largest cell count (exact cells per rank) or all of them")
    parser.add_argument("--cores", type=int, help="cores for R x T (default: the CPUs this process may use)")
    parser.add_argument("--mpiexec", default="mpirun", help="the MPI launcher for local runs (default mpirun)")
    parser.add_argument("--time", default="01:00:00", help="--slurm: each task's time limit (default 01:00:00)")
    parser.add_argument("--edgefem-args", default="", help="more arguments for edgefem run, e.g. '-pc_type gamg'")
    parser.add_argument("--repeat", type=int, default=1, help="runs per configuration (plots: the medians; default 1)")
    parser.add_argument("--warmup", type=int, default=1,
                        help="untimed runs of the first configuration before the timed ones (default 1)")
    args = parser.parse_args(argv)
    try:
        if args.collect:
            collect(args.collect)
            return 0
        missing = [o for o in ("job", "ranks", "kind", "out") if getattr(args, o) is None]
        if missing:
            raise StudyError("missing " + ", ".join("--" + o for o in missing) + " (or --collect DIR)")
        args.ranks = positive_list(args.ranks, "ranks")
        args.threads = positive_list(args.threads, "threads")
        if args.repeat < 1:
            raise StudyError(f"--repeat: expected a positive integer, got {args.repeat}")
        if args.warmup < 0:
            raise StudyError(f"--warmup: expected 0 or a positive integer, got {args.warmup}")
        args.edgefem_args = shlex.split(args.edgefem_args)
        if args.cores is None:
            args.cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        elif args.cores < 1:
            raise StudyError(f"--cores: expected a positive integer, got {args.cores}")
        edgefem = find_edgefem(args.edgefem)
        if not args.slurm and shutil.which(args.mpiexec) is None:
            raise StudyError(f"--mpiexec: '{args.mpiexec}' not found (install Open MPI, or give --mpiexec PATH)")
        manifest = prepare(args)
        if args.slurm:
            write_sbatch(args, manifest, edgefem)
            return 0
        run_locally(args, manifest, edgefem)
        collect(args.out)
        return 0
    except StudyError as e:
        print(f"study.py: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
