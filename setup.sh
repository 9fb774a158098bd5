#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the Debian 12 packages edgefem needs (only apt-get; run as root or with sudo). clang, its libFuzzer
# runtime (libclang-rt-dev) and its OpenMP (libomp-dev: the job reader names models, whose kernels use OpenMP)
# build the reader fuzz targets that the test suite runs briefly (scripts/fuzz.sh). Python 3 runs the scripted tests
# (tests/python/) and jobs/scaling/study.py, which reads jobs with PyYAML and plots with matplotlib; h5py and meshio
# read the XDMF/HDF5 output back (tests/python/check_xdmf.py); libhdf5-openmpi-dev writes it. slurmctld,
# slurmd and slurm-client let the suite run the Slurm round trip of jobs/cluster/slurm.sbatch (scripts/slurm_check.sh
# starts its own one-node Slurm in a temporary folder; the packages' system services are not configured or used).
# libopenblas0-openmp: Debian's optimised BLAS/LAPACK, chosen by update-alternatives over the reference BLAS that
# PETSc's packages pull in; MUMPS (the default direct solver up to 10,000 unknowns) spends most of its time in dgemm
# and dtrsm, 4x less CPU with it on the contact test's 3,479-vertex ball. The OpenMP build follows OMP_NUM_THREADS (one
# per rank under mpirun, as edgefem's threads), where the pthread build would start a thread per core in every rank.
#   ./setup.sh               install what is missing
#   ./setup.sh --with-gmsh   also Gmsh (scripts/bench_solve.sh meshes the benchmark cantilever with it)
set -euo pipefail
packages=(
  build-essential cmake pkg-config git
  libopenmpi-dev openmpi-bin
  libpetsc-real-dev libopenblas0-openmp libhdf5-openmpi-dev libmetis-dev libvtk9-dev libeigen3-dev
  libyaml-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev zlib1g-dev libexpat1-dev
  clang libclang-rt-dev libomp-dev
  python3 python3-yaml python3-matplotlib python3-h5py python3-meshio
  slurmctld slurmd slurm-client
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
# Debian's python3-paraview conflicts with python3-vtk9, which libvtk9-dev depends on: apt refuses to install the
# VTK headers while ParaView's Python is there (and says only "pkgProblemResolver::Resolve generated breaks").
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
if [[ " ${missing[*]} " == *" libvtk9-dev "* ]] && installed python3-paraview; then
  cat >&2 <<MSG
setup.sh: cannot install libvtk9-dev (VTK, needed to build edgefem) next to Debian's ParaView Python:
  python3-paraview conflicts with python3-vtk9, which libvtk9-dev depends on; one machine cannot hold both.
To build, remove ParaView's Python (the ParaView GUI stays; pvpython and its Python shell go):
  ${SUDO:+$SUDO }apt-get remove -y python3-paraview && ./setup.sh
After building, you can get it back (this removes libvtk9-dev again; the built build/edgefem keeps working):
  ${SUDO:+$SUDO }apt-get install -y python3-paraview
MSG
  exit 1
fi
echo "setup.sh: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
