#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plot a dynamic run's energy.csv (kinetic, strain, attachment, external work and the balance `total`) and its
reactions.csv (the force on each boundary entry over time) into one PNG.

    /usr/bin/python3 scripts/plot_energy.py out/swinging_beam [--out energy.png]

DIR is the run's output directory (or its energy.csv). Needs matplotlib (Debian: python3-matplotlib; use Debian's
/usr/bin/python3 if the python3 on PATH is another one). Without reactions.csv only the energies are drawn.
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"{path}: no rows")
    return rows


def plot_energies(ax, rows):
    t = [float(r["time"]) for r in rows]
    for key in ("kinetic", "strain", "attachment", "external_work", "total"):
        if key not in rows[0]:
            continue
        values = [float(r[key]) for r in rows]
        if key == "attachment" and not any(values):
            continue
        ax.plot(t, values, label=key, linestyle="--" if key == "total" else "-")
    ax.set_xlabel("time")
    ax.set_ylabel("energy")
    ax.set_title("energy.csv (total: the energy balance, near 0 without damping)")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)


def plot_reactions(ax, rows):
    boundaries = sorted({int(r["boundary"]) for r in rows})
    for b in boundaries:
        mine = [r for r in rows if int(r["boundary"]) == b]
        t = [float(r["time"]) for r in mine]
        for axis in ("fx", "fy", "fz"):
            ax.plot(t, [float(r[axis]) for r in mine], label=f"boundary[{b}] {axis}")
    ax.set_xlabel("time")
    ax.set_ylabel("force")
    ax.set_title("reactions.csv (total force on each boundary entry's vertices)")
    ax.legend(fontsize="small", ncol=3)
    ax.grid(alpha=0.3)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", help="the run's output directory or its energy.csv")
    p.add_argument("--out", help="the PNG (default: DIR/energy.png)")
    args = p.parse_args()
    directory = args.run if os.path.isdir(args.run) else os.path.dirname(args.run) or "."
    energy = os.path.join(directory, "energy.csv")
    reactions = os.path.join(directory, "reactions.csv")
    if not os.path.exists(energy):
        sys.exit(f"{energy}: not found (energy.csv is written by dynamic runs)")
    panels = 2 if os.path.exists(reactions) else 1
    fig, axes = plt.subplots(panels, 1, figsize=(8, 3.2 * panels), squeeze=False)
    plot_energies(axes[0][0], read_csv(energy))
    if panels == 2:
        plot_reactions(axes[1][0], read_csv(reactions))
    fig.tight_layout()
    out = args.out or os.path.join(directory, "energy.png")
    fig.savefig(out, dpi=90)
    print(out)


if __name__ == "__main__":
    main()
