#!/usr/bin/env bash
# Installs the Debian 12 packages edgefem needs (only apt-get; run as root or with sudo).
#   ./setup.sh               install what is missing
#   ./setup.sh --with-gmsh   also Gmsh (scripts/bench_solve.sh meshes the benchmark cantilever with it)
set -euo pipefail
packages=(
  build-essential cmake pkg-config git
  libopenmpi-dev openmpi-bin
  libpetsc-real-dev libmetis-dev libvtk9-dev libeigen3-dev
  libyaml-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
)
[ "${1:-}" = "--with-gmsh" ] && packages+=(gmsh)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup.sh: all packages present"
  exit 0
fi
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "setup.sh: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
