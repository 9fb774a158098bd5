#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Function lengths of the product code, from Universal Ctags' start and end lines (apt-get install universal-ctags):
#   scripts/function_lengths.sh [MIN_LINES] [FOLDERS...]
# lists the functions of at least MIN_LINES lines (default 81), longest first, then the counts over 80 and over 120
# lines (the house rule: none over 120, a handful at most over 80; docs/theory/design.md, "Architecture").
set -euo pipefail
cd "$(dirname "$0")/.."
command -v ctags >/dev/null || { echo "function_lengths: needs Universal Ctags (apt-get install universal-ctags)" >&2; exit 2; }
min=${1:-81}
shift || true
folders=${*:-core mesh materials partition io linalg runtime solver pbd frames run apps}
# shellcheck disable=SC2086
ctags -R --languages=C++ --kinds-C++=f --fields=+ne -f - $folders 2>/dev/null |
  awk -F'\t' -v min="$min" '{
      s = ""; e = ""
      for (i = 4; i <= NF; i++) { if ($i ~ /^line:/) s = substr($i, 6); if ($i ~ /^end:/) e = substr($i, 5) }
      if (e == "") next
      n = e - s + 1; if (n > 80) a++; if (n > 120) b++
      if (n >= min) printf "%5d %s:%s %s\n", n, $2, s, $1
    }
    END { printf "over 80 lines: %d, over 120 lines: %d\n", a + 0, b + 0 > "/dev/stderr" }' | sort -rn
