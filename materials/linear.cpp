// SPDX-License-Identifier: BSD-3-Clause
/// \file linear.cpp
/// Small-strain linear elasticity ("linear"): a constant stiffness K0 equal to the StVK tangent at the
/// reference state, f = K0 (x - X), W = (x - X)^T K0 (x - X) / 2 (Kikuuwe's fourth comparison model,
/// f = K (p - p_ini)). K0 includes the volumetric penalty's Hessian at rest: zero for the cubic penalty,
/// V0 k_vol dJ dJ^T for the quadratic one. K0 comes from the total-Lagrangian kernel evaluated at x = X (so it
/// is the StVK tangent at rest by construction); the block pattern is stvk's (constant_stiffness.hpp).
#include "materials/constant_stiffness.hpp"
#include "materials/formulation.hpp"
#include "materials/tet_geometry.hpp"

namespace edgefem {

std::unique_ptr<TetFormulation> make_linear(std::span<const double> coords, std::span<const LocalIndex> tets,
                                            std::span<const TetMaterial> materials,
                                            std::span<const std::int32_t> material_of_tet) {
  tetgeo::check_inputs(coords.size(), tets, materials.size(), material_of_tet, "make_linear");
  return make_constant_stiffness("linear", coords, *make_stvk_tl(coords, tets, materials, material_of_tet));
}

}  // namespace edgefem
