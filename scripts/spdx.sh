#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Puts the licence identifier (LICENSE: BSD-3-Clause) on the first line of every tracked C++ source and header
# ("// SPDX-License-Identifier: BSD-3-Clause") and of every script and CMake file ("# SPDX-..."; after the #! line
# of a script that has one). Idempotent: files that carry it are left alone.
#   scripts/spdx.sh           add the line where it is missing
#   scripts/spdx.sh --check   list the files without it; exit 1 if there are any (the CTest test license.spdx)
set -euo pipefail
cd "$(dirname "$0")/.."
git rev-parse --git-dir >/dev/null 2>&1 || { echo "not a git checkout: nothing to check"; exit 77; }
tag="SPDX-License-Identifier: BSD-3-Clause"
check=0
[[ "${1:-}" == "--check" ]] && check=1
missing=0
while IFS= read -r f; do
  [[ -f "$f" ]] || continue
  head -n 3 "$f" | grep -q "SPDX-License-Identifier" && continue
  missing=$((missing + 1))
  if ((check)); then
    echo "no SPDX line: $f"
    continue
  fi
  case "$f" in
    *.cpp | *.hpp | *.h | *.cc) line="// $tag" ;;
    *) line="# $tag" ;;
  esac
  if [[ "$(head -c 2 "$f")" == "#!" ]]; then
    sed -i "1a $line" "$f"
  else
    sed -i "1i $line" "$f"
  fi
done < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc' '*.sh' '*.py' '*.sbatch' '*.cmake' '*CMakeLists.txt' '*.cmake.in' \
           '*.pc.in')
if ((check && missing)); then
  echo "$missing file(s) without the SPDX line: scripts/spdx.sh adds it" >&2
  exit 1
fi
((check)) || echo "added the SPDX line to $missing file(s)"
