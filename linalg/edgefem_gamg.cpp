// SPDX-License-Identifier: BSD-3-Clause
#include "linalg/edgefem_gamg.hpp"

#include <petsc/private/pcimpl.h>  // PETSc's PC implementation interface (_p_PC, its ops): as PCKSP, PCREDUNDANT

#include <exception>
#include <new>
#include <string>
#include <utility>

#include "linalg/galerkin.hpp"
#include "linalg/multigrid_products.hpp"
#include "linalg/petsc_util.hpp"

namespace edgefem {
namespace {

/// The PC's data (pc->data).
struct EdgefemGamg {
  PC inner = nullptr;  ///< the PCGAMG doing the multigrid
  MultigridProducts products;
  bool own_products = true;
  bool petsc_galerkin = !kOwnGalerkinHook;
  int finest_steps = 0;  ///< 0: PETSc's
  // The request for the next set-up (edgefem_gamg_request_coarse_rebuild).
  bool coarse_rebuild = false;
  std::function<std::vector<double>()> rotations;
};

EdgefemGamg& data_of(PC pc) { return *static_cast<EdgefemGamg*>(pc->data); }

/// A PETSc callback's body: an exception becomes a PETSc error (it must not cross PETSc's C frames).
template <class Body>
PetscErrorCode as_petsc_callback(PC pc, const char* function, Body&& body) noexcept {
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    return PetscError(PetscObjectComm(reinterpret_cast<PetscObject>(pc)), __LINE__, function, __FILE__, PETSC_ERR_LIB,
                      PETSC_ERROR_INITIAL, "%s", e.what());
  }
}

/// The inner PC's options prefix := the outer's (the inner GAMG reads the standard names under the PC's prefix).
void inherit_prefix(PC pc, PC inner) {
  const char* outer = nullptr;
  const char* current = nullptr;
  EDGEFEM_PETSC(PCGetOptionsPrefix(pc, &outer));
  EDGEFEM_PETSC(PCGetOptionsPrefix(inner, &current));
  if (std::string(outer ? outer : "") != std::string(current ? current : ""))
    EDGEFEM_PETSC(PCSetOptionsPrefix(inner, outer));
}

/// The inner PC's failure state := the outer's before it works, the outer's := the inner's after (the KSP reads and
/// resets the outer's, which stands for the inner).
void failure_to_inner(PC pc, PC inner) {
  inner->failedreason = pc->failedreason;
  inner->failedreasonrank = pc->failedreasonrank;
}
void failure_from_inner(PC pc, PC inner) {
  pc->failedreason = inner->failedreason;
  pc->failedreasonrank = inner->failedreasonrank;
}

/// Whether the options give the number of smoothing steps of level `level`: `-mg_levels_<level>_ksp_max_it` or
/// `-mg_levels_ksp_max_it` under the PC's prefix.
bool smoothing_steps_given(PC pc, PetscInt level) {
  const char* prefix = nullptr;
  EDGEFEM_PETSC(PCGetOptionsPrefix(pc, &prefix));
  PetscOptions options = reinterpret_cast<PetscObject>(pc)->options;
  for (const std::string& name :
       {"-mg_levels_" + std::to_string(level) + "_ksp_max_it", std::string("-mg_levels_ksp_max_it")}) {
    PetscBool given = PETSC_FALSE;
    EDGEFEM_PETSC(PetscOptionsHasName(options, prefix, name.c_str(), &given));
    if (given == PETSC_TRUE) return true;
  }
  return false;
}

/// The finest level's smoother takes d.finest_steps steps, unless the options say otherwise (after a full set-up:
/// a level's count is known only then). The levels between the finest and the coarsest keep PETSc's two.
void set_finest_smoothing_steps(PC pc, const EdgefemGamg& d) {
  if (d.finest_steps <= 0) return;
  PetscInt n_levels = 0;
  EDGEFEM_PETSC(PCMGGetLevels(d.inner, &n_levels));
  if (n_levels < 2 || smoothing_steps_given(pc, n_levels - 1)) return;
  KSP smoother = nullptr;
  EDGEFEM_PETSC(PCMGGetSmoother(d.inner, n_levels - 1, &smoother));
  EDGEFEM_PETSC(KSPSetTolerances(smoother, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT, d.finest_steps));
}

/// GAMG's set-up of the whole hierarchy on the outer PC's operators: our products removed before it (GAMG's set-up
/// reads and replaces the matrices they stand for) and installed again after it, and its coarse operators by our
/// Galerkin products (a marked preconditioning matrix, galerkin.hpp) unless PETSc's are asked for.
void full_set_up(PC pc, EdgefemGamg& d) {
  d.products.remove(d.inner);
  if (d.own_products && !d.petsc_galerkin)
    use_own_galerkin_products(pc->pmat);
  else
    use_petsc_galerkin_products(pc->pmat);  // the matrix may have been marked by another PC
  EDGEFEM_PETSC(PCSetReusePreconditioner(d.inner, PETSC_FALSE));
  EDGEFEM_PETSC(PCSetUp(d.inner));
  // Kept from now on: PCApply sets its PC up, and the inner's matrix changes at every Jacobian (the outer decides).
  EDGEFEM_PETSC(PCSetReusePreconditioner(d.inner, PETSC_TRUE));
  set_finest_smoothing_steps(pc, d);
  if (d.own_products) d.products.install(d.inner);
}

/// Our rebuild of the coarse operators (the request's rotations applied first); false when our products cannot.
bool rebuild_coarse_operators(EdgefemGamg& d, const std::function<std::vector<double>()>& rotations) {
  if (!d.products.installed()) return false;
  return d.products.update_coarse_operators(d.inner, rotations ? rotations() : std::vector<double>{});
}

PetscErrorCode set_up(PC pc) {
  return as_petsc_callback(pc, "PCSetUp_EdgefemGamg", [&] {
    EdgefemGamg& d = data_of(pc);
    inherit_prefix(pc, d.inner);
    EDGEFEM_PETSC(PCSetOperators(d.inner, pc->mat, pc->pmat));
    EDGEFEM_PETSC(PCSetErrorIfFailure(d.inner, pc->erroriffailure));
    const bool coarse_only = std::exchange(d.coarse_rebuild, false) && d.inner->setupcalled;
    const auto rotations = std::exchange(d.rotations, {});
    failure_to_inner(pc, d.inner);
    if (!coarse_only || !rebuild_coarse_operators(d, rotations)) full_set_up(pc, d);
    failure_from_inner(pc, d.inner);
  });
}

PetscErrorCode set_up_on_blocks(PC pc) {
  PetscFunctionBeginUser;
  PetscCall(PCSetUpOnBlocks(data_of(pc).inner));
  PetscFunctionReturn(0);
}

PetscErrorCode apply(PC pc, Vec x, Vec y) {
  PetscFunctionBeginUser;
  PC inner = data_of(pc).inner;
  failure_to_inner(pc, inner);
  PetscCall(PCApply(inner, x, y));
  failure_from_inner(pc, inner);
  PetscFunctionReturn(0);
}

PetscErrorCode apply_transpose(PC pc, Vec x, Vec y) {
  PetscFunctionBeginUser;
  PC inner = data_of(pc).inner;
  failure_to_inner(pc, inner);
  PetscCall(PCApplyTranspose(inner, x, y));
  failure_from_inner(pc, inner);
  PetscFunctionReturn(0);
}

PetscErrorCode mat_apply(PC pc, Mat x, Mat y) {
  PetscFunctionBeginUser;
  PC inner = data_of(pc).inner;
  failure_to_inner(pc, inner);
  PetscCall(PCMatApply(inner, x, y));
  failure_from_inner(pc, inner);
  PetscFunctionReturn(0);
}

/// The inner GAMG's own options, as PCSetFromOptions reads them but for -pc_type (the outer's, under the same
/// prefix). -pc_use_amat too: its default is the inner's own (PCMG's: true, its finest smoother multiplies with the
/// Krylov operator).
PetscErrorCode inner_set_from_options(PC inner) {
  PetscFunctionBeginUser;
  PetscObjectOptionsBegin(reinterpret_cast<PetscObject>(inner));
  PetscCall(PetscOptionsBool("-pc_use_amat",
                             "use Amat (instead of Pmat) to define the preconditioner in nested inner solves",
                             "PCSetUseAmat", inner->useAmat, &inner->useAmat, nullptr));
  PetscTryTypeMethod(inner, setfromoptions, PetscOptionsObject);
  PetscCall(PetscObjectProcessOptionsHandlers(reinterpret_cast<PetscObject>(inner), PetscOptionsObject));
  PetscOptionsEnd();
  ++inner->setfromoptionscalled;
  PetscFunctionReturn(0);
}

PetscErrorCode set_from_options(PC pc, PetscOptionItems* PetscOptionsObject) {
  PetscFunctionBeginUser;
  EdgefemGamg& d = data_of(pc);
  PetscBool petsc_galerkin = d.petsc_galerkin ? PETSC_TRUE : PETSC_FALSE;
  PetscOptionsHeadBegin(PetscOptionsObject, "edgefem GAMG options");
  PetscCall(PetscOptionsBool("-pc_edgefem_gamg_petsc_galerkin",
                             "GAMG's first set-up computes the coarse operators with PETSc's MatPtAP, not ours",
                             "edgefem_gamg_set_petsc_galerkin", petsc_galerkin, &petsc_galerkin, nullptr));
  PetscOptionsHeadEnd();
  d.petsc_galerkin = petsc_galerkin == PETSC_TRUE || !kOwnGalerkinHook;
  PetscCall(as_petsc_callback(pc, "PCSetFromOptions_EdgefemGamg", [&] { inherit_prefix(pc, d.inner); }));
  PetscCall(inner_set_from_options(d.inner));
  PetscFunctionReturn(0);
}

PetscErrorCode view(PC pc, PetscViewer viewer) {
  PetscFunctionBeginUser;
  const EdgefemGamg& d = data_of(pc);
  PetscBool ascii = PETSC_FALSE;
  PetscCall(PetscObjectTypeCompare(reinterpret_cast<PetscObject>(viewer), PETSCVIEWERASCII, &ascii));
  if (ascii) {
    PetscCall(PetscViewerASCIIPrintf(viewer, "  our products: %s; GAMG's first set-up's Galerkin products: %s\n",
                                     d.own_products ? "yes" : "no", d.petsc_galerkin ? "PETSc's" : "ours"));
    if (d.finest_steps > 0)
      PetscCall(PetscViewerASCIIPrintf(viewer, "  finest level's smoothing steps: %d (unless given by options)\n",
                                       d.finest_steps));
    PetscCall(PetscViewerASCIIPrintf(viewer, "  inner PC:\n"));
  }
  PetscCall(PetscViewerASCIIPushTab(viewer));
  PetscCall(PCView(d.inner, viewer));
  PetscCall(PetscViewerASCIIPopTab(viewer));
  PetscFunctionReturn(0);
}

PetscErrorCode reset(PC pc) {
  return as_petsc_callback(pc, "PCReset_EdgefemGamg", [&] {
    EdgefemGamg& d = data_of(pc);
    d.products.remove(d.inner);
    EDGEFEM_PETSC(PCReset(d.inner));
  });
}

PetscErrorCode destroy(PC pc) {
  PetscFunctionBeginUser;
  auto* d = static_cast<EdgefemGamg*>(pc->data);
  // The inner PC first: it holds references to our products' shells, which the products destroy with themselves.
  PetscCall(PCDestroy(&d->inner));
  delete d;
  pc->data = nullptr;
  PetscFunctionReturn(0);
}

PetscErrorCode create(PC pc) {
  PetscFunctionBeginUser;
  auto* d = new (std::nothrow) EdgefemGamg;
  PetscCheck(d, PetscObjectComm(reinterpret_cast<PetscObject>(pc)), PETSC_ERR_MEM, "edgefem_gamg: out of memory");
  pc->data = d;
  PetscCall(PCCreate(PetscObjectComm(reinterpret_cast<PetscObject>(pc)), &d->inner));
  PetscCall(PetscObjectIncrementTabLevel(reinterpret_cast<PetscObject>(d->inner), reinterpret_cast<PetscObject>(pc),
                                         1));
  PetscCall(PCSetType(d->inner, PCGAMG));
  PetscCall(as_petsc_callback(pc, "PCCreate_EdgefemGamg", [&] { inherit_prefix(pc, d->inner); }));
  pc->ops->setup = set_up;
  pc->ops->setuponblocks = set_up_on_blocks;
  pc->ops->apply = apply;
  pc->ops->applytranspose = apply_transpose;
  pc->ops->matapply = mat_apply;
  pc->ops->setfromoptions = set_from_options;
  pc->ops->view = view;
  pc->ops->reset = reset;
  pc->ops->destroy = destroy;
  PetscFunctionReturn(0);
}

/// The PC's data when it is ours, else null.
EdgefemGamg* ours(PC pc) { return is_edgefem_gamg(pc) ? &data_of(pc) : nullptr; }

}  // namespace

void register_edgefem_gamg() { EDGEFEM_PETSC(PCRegister(kPcEdgefemGamg, create)); }

bool is_edgefem_gamg(PC pc) { return pc && has_type(pc, {kPcEdgefemGamg}); }

std::size_t edgefem_gamg_own_bytes(PC pc) { return is_edgefem_gamg(pc) ? data_of(pc).products.bytes() : 0; }

MultigridProducts::Bytes edgefem_gamg_own_bytes_by_part(PC pc) {
  return is_edgefem_gamg(pc) ? data_of(pc).products.bytes_by_part() : MultigridProducts::Bytes{};
}

PC edgefem_gamg_inner(PC pc) {
  EdgefemGamg* d = ours(pc);
  if (!d) throw PetscFailure("edgefem_gamg_inner: the PC is not of type edgefem_gamg");
  return d->inner;
}

void edgefem_gamg_set_own_products(PC pc, bool on) {
  if (EdgefemGamg* d = ours(pc)) d->own_products = on;
}

void edgefem_gamg_set_petsc_galerkin(PC pc, bool petsc) {
  if (EdgefemGamg* d = ours(pc)) d->petsc_galerkin = petsc || !kOwnGalerkinHook;
}

bool edgefem_gamg_petsc_galerkin(PC pc) {
  const EdgefemGamg* d = ours(pc);
  return d && d->petsc_galerkin;
}

void edgefem_gamg_set_finest_smoothing_steps(PC pc, int steps) {
  if (EdgefemGamg* d = ours(pc)) d->finest_steps = steps;
}

int edgefem_gamg_finest_smoothing_steps(PC pc) {
  const EdgefemGamg* d = ours(pc);
  return d ? d->finest_steps : 0;
}

bool edgefem_gamg_request_coarse_rebuild(PC pc, std::function<std::vector<double>()> rotations) {
  EdgefemGamg* d = ours(pc);
  if (!d) return false;
  d->coarse_rebuild = true;
  d->rotations = std::move(rotations);
  return true;
}

}  // namespace edgefem
