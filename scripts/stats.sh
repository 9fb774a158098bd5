# SPDX-License-Identifier: BSD-3-Clause
# Shared by the benchmark scripts (sourced): the median of the numbers on standard input, one per line.
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
