# SPDX-License-Identifier: BSD-3-Clause
# Environment for running edgefem under Open MPI on a small machine (sourced by the scripts).
# Open MPI refuses to run as root without these; harmless otherwise.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Quiet the "no high-performance network" warnings of containers and laptops.
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1
