#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Summarise edgefem_bench_kernels JSON output: time per call, Mtet/s, the speed-up over stvk-tl in the same run
and the speed-up of all threads over 1 thread.

    build/bench/edgefem_bench_kernels --benchmark_out=kernels.json --benchmark_out_format=json
    python3 bench/ratios.py kernels.json
"""
import json
import sys


def main(path):
    with open(path) as f:
        data = json.load(f)
    rows = {}
    # With --benchmark_repetitions, use the medians; otherwise the single runs.
    medians = [b for b in data["benchmarks"] if b.get("aggregate_name") == "median"]
    for b in medians or [b for b in data["benchmarks"] if b.get("run_type", "iteration") == "iteration"]:
        model, kind = b["name"].split("/")[:2]
        cells = int(b["name"].split("cells:")[1].split("/")[0])
        threads = int(b["name"].split("threads:")[1].split("/")[0])
        key = (6 * cells ** 3, kind, threads)
        rows.setdefault(key, {})[model] = b["real_time"] if b["time_unit"] == "ms" else b["real_time"] * 1e-6
    print(f"# {data['context'].get('host_name', '')}, {data['context'].get('num_cpus', '?')} CPUs")
    print("| tets | kernel | threads | model | ms | Mtet/s | speed-up vs stvk-tl | speed-up vs 1 thread |")
    print("|---|---|---|---|---|---|---|---|")
    for (tets, kind, threads), by_model in sorted(rows.items()):
        base = by_model.get("stvk-tl")
        for model, ms in sorted(by_model.items()):
            one = rows.get((tets, kind, 1), {}).get(model)
            vs_tl = f"{base / ms:.2f}" if base else "-"
            vs_one = f"{one / ms:.2f}" if one and threads != 1 else "-"
            print(f"| {tets} | {kind} | {threads} | {model} | {ms:.3f} | {tets / ms / 1e3:.2f} | {vs_tl} | {vs_one} |")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "kernels.json")
