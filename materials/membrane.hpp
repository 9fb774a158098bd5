// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file membrane.hpp
/// Membranes on triangles in 3D (Delingette, "Triangular Springs for Modeling Non-Linear Membranes", TVCG 2008),
/// behind the TetFormulation interface (formulation.hpp: f = +dW/dx, K = df/dx; the block pattern is the touched
/// vertices' diagonal blocks, then (v0, v1), (v1, v0) for every edge, v0 < v1, edges sorted by (v0, v1)).
///
/// Models (make_membrane):
/// - "trbs": triangular biquadratic springs (§III). Per triangle, with D2_i = l_i^2 - L_i^2 for the edge opposite
///   vertex i and the angular sum over UNORDERED pairs {i, j} (k the third vertex),
///     W_T = sum_i k_i/4 D2_i^2 + sum_{i<j} c_k/2 D2_i D2_j,
///     k_i = h ((lambda + 2 mu) cot^2 a_i + mu) / (8 A)        = h E (2 cot^2 a_i + 1 - nu) / (16 (1 - nu^2) A),
///     c_k = h ((lambda + 2 mu) cot a_i cot a_j - mu) / (8 A) = h E (2 cot a_i cot a_j + nu - 1) / (16 (1 - nu^2) A),
///   (a_i the reference angle at vertex i, A the reference area, h the thickness), which is exactly the
///   plane-stress St. Venant-Kirchhoff membrane W_T = h A (lambda/2 tr(E)^2 + mu tr(E^2)), lambda = E nu/(1 - nu^2),
///   mu = E / (2 (1 + nu)) (Delingette's mu is 2 mu and his density mu/2 tr E^2).
/// - "trqs": triangular quadratic springs (§IV-B), dl_i = l_i - L_i:
///     W_T = sum_i kappa_i/2 dl_i^2 + sum_{i<j} gamma_k dl_i dl_j,  kappa_i = 2 L_i^2 k_i,  gamma_k = 2 L_i L_j c_k,
///   the small-strain limit of trbs (D2_i ~ 2 L_i dl_i): same tangent at rest, not a continuum model.
/// - "springs": the tensile part of trqs only (kappa_i, no angular springs): a plain spring network.
/// - "linear-membrane": small-strain linear membrane, K0 = the trbs tangent at rest (in-plane only: no out-of-plane
///   stiffness), f = K0 (x - X), W = (x - X)^T K0 (x - X) / 2.
/// Energies are summed over triangles; tensile coefficients of an edge are accumulated from its triangles.
///
/// Sign convention: Delingette writes F = -dW/dQ; here f = +dW/dx (the formulation.hpp convention).
///
/// Damping (Delingette §V-C; "trbs", "trqs", "springs"): each triangle's elongations are replaced by damped values
/// in its spring forces (not in W), with zeta_T = the triangle's MembraneMaterial::damping and v the velocities:
///   trbs            D2_i^D = D2_i + zeta_T (v_j - v_k).(x_j - x_k)               = D2_i + zeta_T/2 dD2_i/dt,
///   trqs, springs   dl_i^D = dl_i + zeta_T (v_j - v_k).(x_j - x_k)/|x_j - x_k|   = dl_i + zeta_T   ddl_i/dt.
/// The spring forces are linear in the elongations, so the total force is f(x) + f_v(x, v) with the viscous force
/// f_v = G^T A_v G v (TetFormulation::viscous_force_and_damping): G = d phi/dx (phi = D2 or dl per edge), A_v the
/// spring-constant matrix of W with every triangle's constants scaled by zeta_T/2 (trbs) or zeta_T (trqs,
/// springs). The damping matrix D = df_v/dv = G^T A_v G is the material part of the tangent K with those scaled
/// constants (the terms proportional to the identity, s d2phi/dx2, dropped): symmetric positive semi-definite,
/// zero on rigid velocities, independent of v. zeta_T scales triangle T's own contributions only, so an edge
/// shared by triangles with different zeta gets sum_T zeta_T k_{T,E} (each triangle damps its own springs exactly
/// as Delingette's per-triangle rule). viscous() is true iff some zeta_T > 0.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "materials/formulation.hpp"

namespace edgefem {

/// Isotropic membrane material: Young's modulus E > 0, plane-stress Poisson ratio -1 < nu < 1, thickness h > 0,
/// and Delingette's damping coefficient zeta >= 0 (a time; §V-C, see "Damping" above; ignored by
/// "linear-membrane").
struct MembraneMaterial {
  double young = 0.0;
  double poisson = 0.0;
  double thickness = 0.0;
  double damping = 0.0;
};

/// The membrane models make_membrane accepts.
inline constexpr std::array<std::string_view, 4> kMembraneModels = {"trbs", "trqs", "springs", "linear-membrane"};

/// Spring constants of one triangle (thickness included). Local vertex i is opposite local edge i, which joins
/// local vertices i+1 and i+2 (mod 3); the angular spring at vertex k couples the two edges meeting at k.
struct TriangleSprings {
  std::array<double, 3> tensile{};  ///< k_i (trbs) or kappa_i (trqs) of edge i
  std::array<double, 3> angular{};  ///< c_k (trbs) or gamma_k (trqs) of the angular spring at vertex k
  double damping = 0.0;             ///< Delingette's zeta of the triangle (>= 0; see "Damping" above)
};

/// The elongation measure of a spring family: squared_length D2 = l^2 - L^2 with
/// W_T = sum_i tensile_i/4 D2_i^2 + sum_{i<j} angular_k/2 D2_i D2_j (trbs), or length dl = l - L with
/// W_T = sum_i tensile_i/2 dl_i^2 + sum_{i<j} angular_k dl_i dl_j (trqs, springs).
enum class SpringStrain : std::uint8_t { squared_length, length };

/// Delingette's k_i, c_k of the reference triangle X (9 doubles: 3 vertices), damping = material.damping. Throws
/// std::invalid_argument for a degenerate triangle (zero area) or an invalid material.
TriangleSprings trbs_springs(std::span<const double, 9> X, const MembraneMaterial& material);
/// kappa_i = 2 L_i^2 k_i, gamma_k = 2 L_i L_j c_k (eq. 21), damping = material.damping.
TriangleSprings trqs_springs(std::span<const double, 9> X, const MembraneMaterial& material);

/// Throws std::invalid_argument naming the violated condition unless E > 0, -1 < nu < 1, h > 0 and
/// 0 <= damping < infinity.
void check_membrane_material(const MembraneMaterial& material);

/// Spring network on triangles with given per-triangle constants (`springs[t]` for triangle t): the engine behind
/// "trbs", "trqs" and "springs". With angular = false the angular constants are ignored and no angular terms are
/// evaluated at all (the "springs" fast path). springs[t].damping is triangle t's zeta (strain squared_length: the
/// trbs rule, length: the trqs rule; see "Damping"). Throws std::invalid_argument on inconsistent sizes,
/// out-of-range or repeated vertex ids, and a negative or non-finite damping.
std::unique_ptr<TetFormulation> make_triangle_springs(std::string name, SpringStrain strain,
                                                      std::span<const double> coords,
                                                      std::span<const LocalIndex> triangles,
                                                      std::span<const TriangleSprings> springs, bool angular = true);

/// Small-strain linear membrane, name "linear-membrane": K0 = the trbs tangent at coords.
std::unique_ptr<TetFormulation> make_linear_membrane(std::span<const double> coords,
                                                     std::span<const LocalIndex> triangles,
                                                     std::span<const MembraneMaterial> materials,
                                                     std::span<const std::int32_t> material_of_triangle);

/// One of kMembraneModels on `triangles` (3 vertex ids each) with reference positions `coords` (3 per vertex);
/// `materials` is a table and material_of_triangle[t] the index of triangle t's entry. Throws
/// std::invalid_argument for an unknown model, inconsistent sizes, out-of-range ids, invalid materials and
/// degenerate triangles.
std::unique_ptr<TetFormulation> make_membrane(std::string_view model, std::span<const double> coords,
                                              std::span<const LocalIndex> triangles,
                                              std::span<const MembraneMaterial> materials,
                                              std::span<const std::int32_t> material_of_triangle);

}  // namespace edgefem
