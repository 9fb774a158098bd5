#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Plots of the Delingette experiment CSVs (results/*.csv, made by run.sh) as PNG, with gnuplot
# (Debian: apt-get install gnuplot-nox). Fig. 10: p(eps_y) and eps_x(eps_y) at nu = 0.6; Fig. 11: the relative
# difference of eps_y to the linear membrane at p = -0.1 E h over nu.
set -euo pipefail
cd "$(dirname "$0")/results"
command -v gnuplot >/dev/null || { echo "plot.sh: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 1; }
for mesh in square sheet; do
  gnuplot <<GP
set datafile separator ","
set terminal pngcairo size 1100,450 font ",10"
set output "curves_nu0.6_${mesh}.png"
set multiplot layout 1,2 title "Pure traction, nu = 0.6 (${mesh} mesh): only converged, non-inverted states"
set key left top
set grid
set xlabel "eps_y"
set ylabel "p / (E h)"
plot for [m in "trbs trqs springs linear-membrane"] "curves_nu0.6_${mesh}.csv" \
     using (strcol(1) eq m && strcol(7) eq "ok" ? \$3 : NaN):2 with linespoints title m
set ylabel "eps_x"
plot for [m in "trbs trqs springs linear-membrane"] "curves_nu0.6_${mesh}.csv" \
     using (strcol(1) eq m && strcol(7) eq "ok" ? \$3 : NaN):4 with linespoints title m
unset multiplot
set terminal pngcairo size 600,450 font ",10"
set output "nu_sweep_p-0.1_${mesh}.png"
set title "eps_y relative to linear-membrane at p = -0.1 E h (${mesh} mesh)"
set xlabel "nu"
set ylabel "eps_y / eps_y(linear) - 1"
set key left bottom
plot for [m in "trbs trqs springs"] "nu_sweep_p-0.1_${mesh}.csv" \
     using (strcol(1) eq m && strcol(6) eq "ok" ? \$2 : NaN):5 with linespoints title m
GP
done
ls -1 *.png
