// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file edgefem_gamg.hpp
/// The preconditioner type `edgefem_gamg` (`-pc_type edgefem_gamg`, PCSetType(pc, kPcEdgefemGamg)): PETSc's GAMG
/// with our own machinery around its set-ups. It wraps an inner PCGAMG, which keeps the standard option names
/// under the PC's own prefix (`-pc_gamg_*`, `-mg_levels_*`, `-mg_coarse_*`), and owns:
///  - its set-ups: a full GAMG set-up (the first one, and whenever asked for nothing else), or, when the caller asked
///    for it (edgefem_gamg_request_coarse_rebuild), our cheap rebuild of the coarse operators with the interpolations
///    GAMG made (MultigridProducts::update_coarse_operators: our Galerkin products, galerkin.hpp), the finest
///    interpolation's rows turned by the vertices' rotations first when the caller gives them (the corotational
///    interpolation);
///  - our products (multigrid_products.hpp): installed after each full set-up (single-precision block copies of the
///    coarse operators and interpolations, multiplied on the OpenMP threads) and removed before the next;
///  - GAMG's first set-up computing its coarse operators with our Galerkin products (use_own_galerkin_products),
///    unless `-pc_edgefem_gamg_petsc_galerkin` (or edgefem_gamg_set_petsc_galerkin) asks for PETSc's MatPtAP, which
///    is also what PETSc versions other than the ones the hook was written for get;
///  - the finest level's number of smoothing steps when a caller sets one (edgefem_gamg_set_finest_smoothing_steps:
///    edgefem's default is one Chebyshev step there), on its own smoother after each full set-up: the levels between
///    the finest and the coarsest keep PETSc's two. A user's `-mg_levels_ksp_max_it` or
///    `-mg_levels_<finest>_ksp_max_it` wins. Nothing is written into the options database.
/// The caller keeps the reuse policy: it says when a set-up is due (KSPSetReusePreconditioner, KSPSetUp) and which
/// kind (a request for the cheap one before it); the PC does it. With reuse off, a set-up PETSc starts by itself
/// (PCSetUp on a changed matrix) is a full one.
///
/// Its own options (prefix: the PC's): `-pc_edgefem_gamg_petsc_galerkin` (bool, default false).
#include <petscksp.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "linalg/multigrid_products.hpp"

namespace edgefem {

/// PETSc's name of the type.
inline constexpr char kPcEdgefemGamg[] = "edgefem_gamg";

/// Registers the type with PETSc (PCRegister; registering again replaces the entry, so it may be called before
/// every use). After PetscInitialize. Not collective.
void register_edgefem_gamg();

/// Whether `pc` has the type edgefem_gamg.
[[nodiscard]] bool is_edgefem_gamg(PC pc);

/// The inner PCGAMG of `pc` (type edgefem_gamg): PCGAMGSet* calls on it set defaults, which the options database's
/// `-pc_gamg_*` override at PCSetFromOptions. The PC keeps ownership.
[[nodiscard]] PC edgefem_gamg_inner(PC pc);

/// Our products (multigrid_products.hpp) and Galerkin products (galerkin.hpp) around the set-ups, and with them the
/// cheap rebuilds: on (the default) or off (PETSc's GAMG inside, set up fully at every set-up). Ignored for other
/// types. Takes effect at the next full set-up.
void edgefem_gamg_set_own_products(PC pc, bool on);

/// GAMG's first set-up computes its coarse operators with PETSc's MatPtAP (true) or our GalerkinProduct (false, the
/// default where the PETSc version allows it: galerkin.hpp, kOwnGalerkinHook). Ignored for other types.
void edgefem_gamg_set_petsc_galerkin(PC pc, bool petsc);
/// Whether the next full set-up uses PETSc's MatPtAP (the option, the function above, or a PETSc version without
/// the hook).
[[nodiscard]] bool edgefem_gamg_petsc_galerkin(PC pc);

/// The finest level's smoothing steps after each full set-up (0: PETSc's, the default), unless the options give
/// `-mg_levels_ksp_max_it` or the finest level's own `-mg_levels_<l>_ksp_max_it`. Ignored for other types.
void edgefem_gamg_set_finest_smoothing_steps(PC pc, int steps);
/// What edgefem_gamg_set_finest_smoothing_steps set (0 for other types).
[[nodiscard]] int edgefem_gamg_finest_smoothing_steps(PC pc);

/// Bytes of what `pc` (type edgefem_gamg) holds besides PETSc's GAMG levels: our products (MultigridProducts::bytes;
/// the Galerkin products GAMG's set-up attached to its coarse matrices are counted with those). 0 for other types.
[[nodiscard]] std::size_t edgefem_gamg_own_bytes(PC pc);
/// The same by part (copies, the interpolations' AIJ matrices, our Galerkin products, the rest values).
[[nodiscard]] MultigridProducts::Bytes edgefem_gamg_own_bytes_by_part(PC pc);

/// The next set-up of `pc` (type edgefem_gamg, set up before) rebuilds only the coarse operators, with GAMG's
/// interpolations, by our Galerkin products; `rotations`, when given, is called (collectively, once) if the products
/// are installed, and returns each owned fine vertex's rotation from the reference (9 per vertex, row-major) by which
/// the finest interpolation's rows are turned first. Falls back to a full set-up when our products cannot do it.
/// Returns false, with nothing asked, for other types (their next set-up is PETSc's).
bool edgefem_gamg_request_coarse_rebuild(PC pc, std::function<std::vector<double>()> rotations = {});

}  // namespace edgefem
