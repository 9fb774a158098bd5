// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file mpi_startup.hpp
/// Open MPI's start-up on one node. Debian's Open MPI 4.1 (openmpi-mca-params.conf excludes UCX) lets every
/// MPI_Init also try the `cm` point-to-point layer, whose PSM and PSM2 transports (Omni-Path, TrueScale) take about
/// 0.2 s to find no such hardware before `ob1` (shared memory through the vader BTL, TCP between nodes) is chosen.
/// When every rank of the job is on this node, edgefem asks for `ob1` at once: the same layer Open MPI ends up
/// with there, 0.2 s sooner (`mpirun -n 2` of an empty MPI program: 0.48 -> 0.28 s; the bundled cantilever on 2
/// ranks 0.94 -> 0.71 s, docs/performance.md "Measured performance").
namespace edgefem {

/// Sets OMPI_MCA_pml=ob1 in this process's environment when (a) OMPI_MCA_pml is not set (a user's or mpirun's
/// `--mca pml` choice wins; `OMPI_MCA_pml=^ucx` restores Open MPI's own selection) and (b) the job is on one node:
/// mpirun says so (OMPI_COMM_WORLD_LOCAL_SIZE equals OMPI_COMM_WORLD_SIZE, the same on every rank, so all ranks
/// choose alike), or no launcher started the process (a singleton: no OMPI_COMM_WORLD_SIZE, PMIX_RANK or
/// PMI_RANK). Returns whether it did. Call before MPI_Init (PetscInitialize).
bool prefer_ob1_on_one_node();

/// Sets OMPI_MCA_mpi_yield_when_idle=1 in this process's environment when the job has more than one rank and the
/// variable is not set (a user's or mpirun's `--mca mpi_yield_when_idle 0` wins). Open MPI's waits (a receive, a
/// collective) poll without a pause unless it knows the node is oversubscribed; on a machine whose cores other
/// processes share too (a cloud VM, CI, this project's 2-core VM), the waiting rank's polling takes a core from the
/// rank it waits for. The 136,565-tet cantilever on 2 ranks at load average 10-18: whole run 26.0 -> 14.4 s, CPU
/// 9.0 -> 5.1 s (medians of 4 pairs, docs/performance.md "Scaling with ranks").
/// One rank (a singleton, `mpirun -n 1`, `srun -n 1`) has no one to wait for, and there a yield only costs: MUMPS's
/// solve probes for messages (MPI_Iprobe) between its blocks of work, and every empty probe then yields. Linux's
/// EEVDF scheduler (6.6 and later) moves a yielding task's deadline a slice later at each yield, so beside busy
/// processes the rank that yields tens of thousands of times a second gets almost no core: the contact tests'
/// 1-rank direct solves, 10 s of CPU, took 208 s beside four busy loops with the yield and 28 s without.
/// The rank count is read from the launcher's environment (OMPI_COMM_WORLD_SIZE, else SLURM_NTASKS or PMI_SIZE);
/// another launcher that names none of them gets the yield. Returns whether it set it. Call before MPI_Init.
bool yield_when_idle();

}  // namespace edgefem
