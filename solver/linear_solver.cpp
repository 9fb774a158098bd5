// SPDX-License-Identifier: BSD-3-Clause
#include "solver/linear_solver.hpp"

#include <string>

#include "linalg/edgefem_gamg.hpp"

namespace edgefem {

bool option_given(const char* name) {
  PetscBool given = PETSC_FALSE;
  EDGEFEM_PETSC(PetscOptionsHasName(nullptr, nullptr, name, &given));
  return given == PETSC_TRUE;
}

namespace {

/// Whether the options database, the job or the command line gives `name`.
bool option_given_anywhere(const Job& job, const std::string& cli_petsc_options, const char* name) {
  return option_given(name) || job.petsc_options.find(name) != std::string::npos ||
         cli_petsc_options.find(name) != std::string::npos;
}

/// A small time-step matrix (positive definite: the mass term): PETSc's own Cholesky in reverse Cuthill-McKee
/// order, whose solves cost less than MUMPS's on a few thousand unknowns (swinging beam: 0.0119 -> 0.0076 s per
/// step); on several ranks the whole matrix gathered and factorized on every rank (PCREDUNDANT); by default LU of
/// the BAIJ copy's 3x3 blocks instead (factors_block_copy). Elsewhere MUMPS:
/// its LDL^T pivots, so the indefinite tangents of static problems (buckling, twisting) factorize too.
bool own_cholesky(const SolverSpec& spec, const LinearSystemKind& kind) {
  return spec.preconditioner == SolverSpec::Preconditioner::automatic && kind.dynamic;
}

/// Block Jacobi's and additive Schwarz's incomplete factorizations (the whole matrix's on one rank) factorize the
/// BAIJ copy: ILU(kIccLevels) on 3x3 blocks. A symmetric matrix's ILU(k) is its ICC(k) in exact arithmetic (the same
/// level-k pattern: a vertex's three unknowns are coupled whole), so CG keeps it and needs the same iterations, but
/// PETSc's block kernels (one column index per block, MatSolve_SeqBAIJ_3) solve faster and the overlap's
/// submatrices are extracted by blocks: hanging cloth on 2 ranks, 5,506 iterations either way, x0.72 per step
/// (docs/theory/solver.md). Dynamic membranes only (the mass term makes their time-step matrices positive definite): PETSc's
/// ICC shifts a matrix that is not (Manteuffel's positive-definite shift, its default) and the block ILU cannot, so
/// a solid whose job asks for schwarz or block-jacobi keeps ICC (the swinging beam at dt 100: with the block ILU
/// CG met an indefinite preconditioner). Not when the user names -pc_type or -sub_pc_type (ICC needs AIJ) or turns
/// `block_operator` off.
///
/// Likewise the factorization of a small time-step matrix (own_cholesky) is LU of the BAIJ copy's 3x3 blocks instead
/// of Cholesky of the AIJ matrix: an exact factorization either way, its solves reading twice the entries but one
/// column index per block, in PETSc's unrolled 3x3 kernels. Swinging and pulled beams: the same CG iterations and
/// trajectory, x0.59-0.69 per step on 1 and 2 ranks (docs/theory/solver.md). Always inside PCREDUNDANT, on one rank too:
/// PETSc 3.18's PCLU on our SeqBAIJ matrix read past the end of its ordering's index set and crashed (valgrind),
/// the same factorization inside PCREDUNDANT is clean. Not when the user names -pc_type or -redundant_pc_type.
bool factors_block_copy(const Job& job, const std::string& cli_petsc_options, const LinearSystemKind& kind) {
  using P = SolverSpec::Preconditioner;
  const P chosen = chosen_preconditioner(job.solver, kind);
  if (!job.solver.block_operator || option_given_anywhere(job, cli_petsc_options, "-pc_type")) return false;
  if (chosen == P::direct)
    return own_cholesky(job.solver, kind) && !option_given_anywhere(job, cli_petsc_options, "-redundant_pc_type");
  return kind.local_preconditioner && (chosen == P::schwarz || chosen == P::block_jacobi) &&
         !option_given_anywhere(job, cli_petsc_options, "-sub_pc_type");
}

/// The preconditioner is a multigrid one, whose finest smoothers multiply with the Krylov operator.
bool multigrid(KSP ksp) {
  PC pc = nullptr;
  EDGEFEM_PETSC(KSPGetPC(ksp, &pc));
  return has_type(pc, {kPcEdgefemGamg, PCGAMG, PCML, PCMG});
}

/// Our defaults for PETSc's options: set() puts an option into the options database when neither the database, the
/// job nor the command line gives it (theirs win).
struct OptionDefaults {
  const Job& job;
  const std::string& cli_petsc_options;
  [[nodiscard]] bool given(const char* name) const { return option_given_anywhere(job, cli_petsc_options, name); }
  void set(const char* name, const char* value) const {
    if (!given(name)) EDGEFEM_PETSC(PetscOptionsSetValue(nullptr, name, value));
  }
};

/// The direct solvers: a sparse Cholesky factorization by MUMPS, or (own_cholesky) PETSc's of a small time-step
/// matrix, on several ranks (and for the BAIJ copy's LU on one) redundant on every rank.
void configure_direct(PC pc, const OptionDefaults& defaults, const SolverSpec& spec, const LinearSystemKind& kind,
                      bool factor_blocks) {
  if (own_cholesky(spec, kind) && (kind.ranks > 1 || factor_blocks)) {
    // One subcommunicator per rank: each holds the whole factor (on one rank: PCREDUNDANT for PCLU's sake,
    // factors_block_copy).
    EDGEFEM_PETSC(PCSetType(pc, PCREDUNDANT));
    defaults.set("-redundant_pc_type", factor_blocks ? "lu" : "cholesky");
    defaults.set("-redundant_pc_factor_mat_solver_type", "petsc");
    defaults.set("-redundant_pc_factor_mat_ordering_type", "rcm");
    return;
  }
  EDGEFEM_PETSC(PCSetType(pc, PCCHOLESKY));
  if (own_cholesky(spec, kind)) {
    EDGEFEM_PETSC(PCFactorSetMatSolverType(pc, MATSOLVERPETSC));
    defaults.set("-pc_factor_mat_ordering_type", "rcm");
  } else {
    EDGEFEM_PETSC(PCFactorSetMatSolverType(pc, MATSOLVERMUMPS));
  }
}

/// Block Jacobi and additive Schwarz with incomplete factorizations (`chosen`: which), on one rank the factorization
/// of the whole matrix.
void configure_local_factorizations(KSP ksp, PC pc, const OptionDefaults& defaults, SolverSpec::Preconditioner chosen,
                                    const LinearSystemKind& kind, bool factor_blocks) {
  // One rank: the one block is the whole matrix, so ICC in RCM order itself, without the block's copy at
  // each set-up and the scatters at each application (hanging cloth: the same 3,206 CG iterations, PC set-ups
  // 0.21 -> 0.17 s, 0.0078 -> 0.0071 s per step). PETSc's -pc_factor_* options (not -sub_pc_*) tune it.
  if (kind.ranks == 1) {
    EDGEFEM_PETSC(PCSetType(pc, factor_blocks ? PCILU : PCICC));
    EDGEFEM_PETSC(PCFactorSetLevels(pc, kIccLevels));
    EDGEFEM_PETSC(PCFactorSetMatOrderingType(pc, MATORDERINGRCM));
    return;
  }
  // ICC(kIccLevels) in reverse Cuthill-McKee order on each rank's block (kIccLevels: newton.hpp).
  // Schwarz: the blocks overlap by two layers of vertices; on the hanging cloth on 2 ranks 6,129 instead of
  // block Jacobi's 11,664 CG iterations, 20 % less time per step (ICC(4), PC_ASM_BASIC with CG).
  // Restricted (RAS: each rank keeps only its own rows of its block's solution, one scatter fewer per
  // application) with right-preconditioned GMRES, which needs no symmetry and stops on the true residual: hanging
  // cloth on 2 ranks 6,182 -> 5,506 Krylov iterations, 368 -> 367 Newton, x0.955 per step (median of 10
  // alternating pairs); bending cloth on 3 ranks 145 -> 127 Newton. Membranes only: not for linearized Euler's one
  // tight solve per step (55 iterations a solve: GMRES's growing orthogonalization and restarts cost more than
  // CG's, x1.24 per step), not for solids whose job asks for `schwarz` (the swinging beam at dt 100: GMRES(30)
  // stalls where CG converges), nor with a -ksp_type of the user's (CG, say): there the symmetric PC_ASM_BASIC.
  if (chosen == SolverSpec::Preconditioner::schwarz) {
    EDGEFEM_PETSC(PCSetType(pc, PCASM));
    if (defaults.given("-ksp_type") || !kind.newton_solves || !kind.local_preconditioner) {
      EDGEFEM_PETSC(PCASMSetType(pc, PC_ASM_BASIC));
    } else {
      EDGEFEM_PETSC(PCASMSetType(pc, PC_ASM_RESTRICT));
      EDGEFEM_PETSC(KSPSetType(ksp, KSPGMRES));
      EDGEFEM_PETSC(KSPSetPCSide(ksp, PC_RIGHT));
    }
    EDGEFEM_PETSC(PCASMSetOverlap(pc, 2));
  } else {
    EDGEFEM_PETSC(PCSetType(pc, PCBJACOBI));
  }
  defaults.set("-sub_pc_type", factor_blocks ? "ilu" : "icc");
  defaults.set("-sub_pc_factor_levels", std::to_string(kIccLevels).c_str());
  defaults.set("-sub_pc_factor_mat_ordering_type", "rcm");
}

/// GAMG with our products around its set-ups (edgefem_gamg, linalg/edgefem_gamg.hpp) and our two settings, which a
/// -pc_type of the user's (any, `edgefem_gamg` too) leaves at PETSc's.
void configure_gamg(PC pc, const OptionDefaults& defaults, const SolverSpec& spec) {
  // PETSc's GAMG defaults. A graph threshold of 0.02 saves 9-10 % on the slender cantilever but makes the
  // set-up on a cube 1.6-2.4 times as expensive (docs/theory/solver.md): not a default. Unsmoothed aggregation when
  // the job asks for it or the memory plan chose it (run/memory_budget.hpp): an option default, which a
  // -pc_gamg_type re-creating GAMG's aggregation object still finds.
  EDGEFEM_PETSC(PCSetType(pc, kPcEdgefemGamg));
  if (spec.aggregation == SolverSpec::Aggregation::unsmoothed) defaults.set("-pc_gamg_agg_nsmooths", "0");
  if (defaults.given("-pc_type")) return;
  // Chebyshev of degree 1 instead of PETSc's 2 on the finest level: 30-50 % more CG iterations, each a third
  // cheaper (two fine-level products fewer per V-cycle); less time in CG on the cantilever and the cube at
  // nu = 0.3 and 0.49 alike. The levels between the finest and the coarsest keep PETSc's 2 (a second step there
  // costs a fraction of a fine-level product and improves the coarse-grid correction; docs/theory/solver.md). The PC sets
  // it on its finest smoother after each set-up (a level's count is known only then), unless the options give
  // -mg_levels_ksp_max_it or the finest level's own.
  edgefem_gamg_set_finest_smoothing_steps(pc, 1);
  // The coarsest level up to 1000 unknowns instead of PETSc's 50, solved exactly (LU on one rank, as GAMG puts
  // its coarsest level): the cantilever's 600-unknown level is then the coarsest instead of being smoothed
  // above a 36-unknown one; 328 -> 295 CG iterations and one level fewer to visit on 2 ranks (x0.946 whole
  // runs), on the cube one level fewer to set up (docs/theory/solver.md). -pc_gamg_coarse_eq_limit overrides it.
  EDGEFEM_PETSC(PCGAMGSetCoarseEqLim(edgefem_gamg_inner(pc), 1000));
}

}  // namespace

SolverSpec::Preconditioner chosen_preconditioner(const SolverSpec& spec, const LinearSystemKind& kind) {
  using P = SolverSpec::Preconditioner;
  if (spec.preconditioner != P::automatic) return spec.preconditioner;
  if (kind.local_preconditioner) return P::schwarz;
  if (kind.global_dofs > spec.direct_max_dofs) return P::gamg;
  // A small time-step matrix on several ranks: every rank factorizes the whole of it (own_cholesky). MUMPS's
  // parallel triangular solves cost more than GAMG's iterations (swinging beam, 2 ranks: 0.0130 vs 0.0075 s per
  // step), GAMG more than the redundant factorization's (pulled beam, 2 ranks: 4,305 -> 970 CG iterations, the
  // 1-rank run's, x0.77 per step), and one-level Schwarz/ICC(4) needs some 250 CG iterations per solve when the
  // stiffness term outweighs the mass term (pulled beam, linearized Euler with stiffness damping).
  return P::direct;
}

std::string configure_linear_solver(KSP ksp, const Job& job, const std::string& cli_petsc_options,
                                    const LinearSystemKind& kind, bool factor_blocks) {
  using P = SolverSpec::Preconditioner;
  register_edgefem_gamg();  // -pc_type edgefem_gamg, in the job or on the command line too
  PC pc = nullptr;
  EDGEFEM_PETSC(KSPSetType(ksp, KSPCG));
  EDGEFEM_PETSC(KSPSetTolerances(ksp, job.solver.linear_rtol, PETSC_DEFAULT, PETSC_DEFAULT, 2000));
  EDGEFEM_PETSC(KSPGetPC(ksp, &pc));
  const OptionDefaults defaults{job, cli_petsc_options};
  const P chosen = chosen_preconditioner(job.solver, kind);
  switch (chosen) {
    case P::direct: configure_direct(pc, defaults, job.solver, kind, factor_blocks); break;
    case P::block_jacobi:
    case P::schwarz: configure_local_factorizations(ksp, pc, defaults, chosen, kind, factor_blocks); break;
    case P::hypre:
      EDGEFEM_PETSC(PCSetType(pc, PCHYPRE));
      EDGEFEM_PETSC(PCHYPRESetType(pc, "boomeramg"));
      break;
    case P::gamg:
    case P::automatic: configure_gamg(pc, defaults, job.solver); break;
  }
  PCType ours = nullptr;
  EDGEFEM_PETSC(PCGetType(pc, &ours));
  std::string chosen_type = ours;
  if (!job.petsc_options.empty()) EDGEFEM_PETSC(PetscOptionsInsertString(nullptr, job.petsc_options.c_str()));
  if (!cli_petsc_options.empty()) EDGEFEM_PETSC(PetscOptionsInsertString(nullptr, cli_petsc_options.c_str()));
  EDGEFEM_PETSC(KSPSetFromOptions(ksp));
  return chosen_type;
}

LinearOperators set_up_linear_solver(KSP ksp, const Job& job, const std::string& cli_petsc_options,
                                     const LinearSystemKind& kind, Mat matrix) {
  LinearOperators ops;
  if (factors_block_copy(job, cli_petsc_options, kind)) ops.block = BlockOperator::create(matrix);
  ops.block_preconditioner = ops.block.has_value();  // no copy (its blocks not stored whole): ICC of the AIJ matrix
  ops.pc_type = configure_linear_solver(ksp, job, cli_petsc_options, kind, ops.block_preconditioner);
  if (!ops.block && job.solver.block_operator && multigrid(ksp)) ops.block = BlockOperator::create(matrix, true);
  EDGEFEM_PETSC(KSPSetOperators(ksp, ops.krylov(matrix), ops.preconditioner(matrix)));
  PC pc = nullptr;
  EDGEFEM_PETSC(KSPGetPC(ksp, &pc));
  edgefem_gamg_set_own_products(pc, ops.own_products());  // (a no-op for other types)
  return ops;
}

std::string default_preconditioner_name(const SolverSpec& spec, const LinearSystemKind& kind, bool block_factors) {
  const std::string levels = "(" + std::to_string(kIccLevels) + ")";
  const std::string icc = block_factors ? "ILU" + levels + " on 3x3 blocks" : "ICC" + levels;
  switch (chosen_preconditioner(spec, kind)) {
    case SolverSpec::Preconditioner::direct:
      if (!own_cholesky(spec, kind)) return "Cholesky (MUMPS)";
      if (block_factors)
        return kind.ranks == 1 ? "LU (PETSc, RCM, 3x3 blocks)" : "LU (PETSc, RCM, 3x3 blocks, redundant on every rank)";
      return kind.ranks == 1 ? "Cholesky (PETSc, RCM)" : "Cholesky (PETSc, RCM, redundant on every rank)";
    case SolverSpec::Preconditioner::block_jacobi: return kind.ranks == 1 ? icc : "block Jacobi/" + icc;
    case SolverSpec::Preconditioner::schwarz: return kind.ranks == 1 ? icc : "additive Schwarz/" + icc;
    case SolverSpec::Preconditioner::hypre: return "hypre BoomerAMG";
    default: return spec.aggregation == SolverSpec::Aggregation::unsmoothed ? "GAMG (unsmoothed aggregation)" : "GAMG";
  }
}

}  // namespace edgefem
