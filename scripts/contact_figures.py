#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The contact experiments' figure (README "Contact with obstacles"): the indenter's force-indentation curve
against Hertz's half-space, and the dropped ball's smallest gap and energy per step.

  edgefem run jobs/experiments/contact/indenter.yaml --output OUT/indenter
  edgefem run jobs/experiments/contact/ball_drop.yaml --output OUT/ball_drop
  python3 scripts/contact_figures.py OUT docs/img/contact.png

Reads OUT/indenter/reactions.csv (the `obstacle:pusher` rows), OUT/ball_drop/summary.json (contact.steps) and
OUT/ball_drop/energy.csv. Needs matplotlib (setup.sh installs python3-matplotlib).
"""
import csv
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# indenter.yaml: a sphere of radius 0.5, 0.01 above the top, moved down 0.11 over the load factor; E = 100, nu = 0.3.
R, GAP, TRAVEL, E, NU = 0.5, 0.01, 0.11, 100.0, 0.3


def indenter(out):
    depth, force = [], []
    with open(os.path.join(out, "indenter", "reactions.csv")) as f:
        for row in csv.DictReader(f):
            if row["boundary"] == "obstacle:pusher":
                d = TRAVEL * float(row["time"]) - GAP
                if d >= 0.0:
                    depth.append(d)
                    force.append(-float(row["fz"]))
    return depth, force


def ball(out):
    with open(os.path.join(out, "ball_drop", "summary.json")) as f:
        steps = json.load(f)["contact"]["steps"]
    energy = []
    with open(os.path.join(out, "ball_drop", "energy.csv")) as f:
        for row in csv.DictReader(f):
            energy.append((float(row["time"]), float(row["kinetic"]), float(row["total"])))
    return steps, energy


def main():
    out, png = sys.argv[1], sys.argv[2]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    depth, force = indenter(out)
    e_star = E / (1.0 - NU * NU)
    fine = [TRAVEL * k / 200.0 for k in range(201) if TRAVEL * k / 200.0 <= max(depth)]
    a.plot(fine, [4.0 / 3.0 * e_star * math.sqrt(R) * d ** 1.5 for d in fine], "k--", label="Hertz (half-space)")
    a.plot(depth, force, "o-", label="edgefem, barrier (cylinder r = 0.5)")
    a.set_xlabel("indentation")
    a.set_ylabel("force on the indenter")
    a.set_title("rigid sphere (STL) pressed into a soft cylinder")
    a.legend()
    steps, energy = ball(out)
    dt = energy[1][0] - energy[0][0] if len(energy) > 1 else 1.0
    times = [dt * s for s in steps["step"]]
    b.semilogy(times, [max(g, 1e-12) for g in steps["min_gap"]], "o-", label="smallest gap (> 0 at every step)")
    b.set_xlabel("t")
    b.set_ylabel("smallest gap")
    b.set_title("ball dropped on a plane, dt = %g" % dt)
    c = b.twinx()
    c.plot([e[0] for e in energy], [e[1] for e in energy], "r-", label="kinetic energy")
    c.set_ylabel("kinetic energy", color="r")
    b.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
