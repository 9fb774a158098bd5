#pragma once
/// \file static_solver.hpp
/// Static equilibrium by load stepping and PETSc SNES (newtonls + line search):
/// residual R(x) = f_int(x) - s * f_ext on free dofs, R = x - x_D(s) on prescribed dofs; Jacobian =
/// assembled K with prescribed rows and columns replaced by the identity (symmetric, for CG).
/// Assembly: each rank's formulations fill one COO value array handed to PETSc in one call
/// (MatSetValuesCOO); off-rank rows are summed by PETSc. Positions of ghost vertices are refreshed
/// with a VecGhost update before every evaluation.
#include <mpi.h>
#include <petscsnes.h>

#include <functional>
#include <string>
#include <vector>

#include "io/job.hpp"
#include "partition/partition.hpp"
#include "solver/assembly.hpp"
#include "solver/model.hpp"
#include "solver/petsc_util.hpp"

namespace edgefem {

/// Convergence history of a run, identical on every rank.
struct StepReport {
  int step = 0;
  double load_factor = 0.0;
  int newton_iterations = 0;
  int ksp_iterations = 0;      ///< summed over the step's Newton iterations
  int substeps = 1;            ///< > 1 when the step had to be cut
  double seconds = 0.0;
};

/// Thrown (on every rank) when a load step cannot be solved even after cutting it.
struct SolverError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Our Newton defaults on `snes` (newtonls + critical-point line search, the job's tolerances) and
/// configure_linear_solver() on its KSP, then SNESSetFromOptions.
void configure_newton(SNES snes, const Job& job, const std::string& cli_petsc_options,
                      bool local_preconditioner = false);
/// CG + GAMG (rtol 1e-8), then the job's PETSc options, then the command line's (which win); KSPSetFromOptions.
/// With local_preconditioner, block Jacobi with ICC(0) blocks replaces GAMG as the default (dynamic membranes: GAMG
/// builds an indefinite preconditioner for their mass-dominated, nearly flat systems).
void configure_linear_solver(KSP ksp, const Job& job, const std::string& cli_petsc_options,
                             bool local_preconditioner = false);

/// When `ksp` is CG and its last solve stopped on an indefinite matrix or preconditioner, switch it to GMRES,
/// print a warning on `comm` and return true (the caller retries); otherwise false.
bool switch_to_gmres_if_indefinite(MPI_Comm comm, KSP ksp);

class StaticSolver {
 public:
  /// Sets up vectors, the COO pattern and SNES/KSP with our defaults (CG + GAMG + rigid-body near-null
  /// space), then applies the job's PETSc options and finally `cli_petsc_options` (which win).
  StaticSolver(MPI_Comm comm, const Job& job, const LocalMesh& mesh, Model model,
               const std::string& cli_petsc_options, bool quiet);
  ~StaticSolver();
  StaticSolver(const StaticSolver&) = delete;
  StaticSolver& operator=(const StaticSolver&) = delete;

  /// Solve all load steps; `on_step(step, load_factor)` is called after step 0 (reference) and each
  /// converged step (for output). Throws SolverError when a step fails.
  std::vector<StepReport> run(const std::function<void(int, double)>& on_step);

  /// Current positions of all local vertices (owned then ghosts), 3 per vertex, ghosts up to date.
  [[nodiscard]] std::vector<double> local_positions();
  /// Internal force f_int = dW/dx summed over ranks, for all local vertices (ghosts up to date).
  /// At prescribed dofs of a converged state this is the reaction force.
  [[nodiscard]] std::vector<double> local_internal_force();

  [[nodiscard]] const LocalMesh& mesh() const { return mesh_; }
  [[nodiscard]] const Model& model() const { return model_; }
  [[nodiscard]] SNES snes() const { return snes_; }

 private:
  static PetscErrorCode form_function(SNES, Vec x, Vec r, void* ctx);
  static PetscErrorCode form_jacobian(SNES, Vec x, Mat J, Mat P, void* ctx);
  static PetscErrorCode monitor(SNES, PetscInt it, PetscReal norm, void* ctx);
  void set_prescribed(Vec x, double load_factor);
  bool solve_increment(double from, double to, StepReport& report);

  MPI_Comm comm_;
  const Job& job_;
  const LocalMesh& mesh_;
  Model model_;
  Assembler assembler_;  // after model_: it refers to it
  bool quiet_;
  int rank_ = 0;

  PetscOwner<Vec, VecDestroy> x_, r_, f_ext_;
  std::vector<double> attachment_diagonal_;
  PetscOwner<SNES, SNESDestroy> snes_;
  double load_factor_ = 0.0;
  int step_ = 0, n_steps_ = 1;
  int ksp_iterations_in_step_ = 0;
  PetscLogStage stage_assembly_ = 0, stage_solve_ = 0;
};

}  // namespace edgefem
