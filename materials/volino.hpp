// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file volino.hpp
/// Volino, Magnenat-Thalmann, Faure, "A simple approach to nonlinear tensile stiffness for accurate cloth
/// simulation" (ACM TOG 2009): a generic triangle membrane in the weft/warp frame with pluggable strain-stress
/// laws, behind the TetFormulation interface (formulation.hpp: f = +dW/dx, K = df/dx; block pattern = the touched
/// vertices' diagonal blocks in ascending order, then (v0, v1), (v1, v0) for every edge, v0 < v1, edges sorted).
///
/// Frame (per triangle, from the reference positions X0, X1, X2; see WarpDirection):
///   n = (X1 - X0) x (X2 - X0) / |...|, flipped so that n . up >= 0;
///   p = direction - (direction . n) n, normalised;  warp = cos(angle) p + sin(angle) n x p;  weft = warp x n,
/// so (weft, warp, n) is right-handed and, for a sheet in the z = 0 plane with the defaults, weft = x, warp = y;
/// `angle` turns both counter-clockwise about `up`. Rest coordinates (u_i, v_i) = ((X_i - X0).weft, (X_i - X0).warp)
/// and eq. (6): d = u_1 v_2 - u_2 v_1 (u_0 = v_0 = 0), r_u = (v_1 - v_2, v_2, -v_1) / d, r_v = (u_2 - u_1, -u_2, u_1) / d,
/// rest area A = |d| / 2 (r_ui, r_vi are the shape-function gradients along weft and warp).
///
/// Strains, eqs. (7)-(9) (Green-Lagrange, not linearised; eps_uv is the ENGINEERING shear 2 G_12):
///   U = sum_i r_ui x_i,  V = sum_i r_vi x_i,
///   eps = (eps_uu, eps_vv, eps_uv) = (1/2 (U.U - 1), 1/2 (V.V - 1), U.V).
/// Energy W = h A w(eps) with h the thickness and w the law's energy per unit volume; sigma = dw/deps (2nd
/// Piola-Kirchhoff; sigma_uv = S_12), C = dsigma/deps (3x3, symmetric since every law has a potential).
/// Forces, eq. (11) with f = +dW/dx (Volino writes F = -dW/dP):
///   f_j = h A [sigma_uu r_uj U + sigma_vv r_vj V + sigma_uv (r_uj V + r_vj U)] = h A [U V] S (r_uj, r_vj)^T,
///   S = [[sigma_uu, sigma_uv], [sigma_uv, sigma_vv]].
/// Tangent = the digest's corrected eq. (12) (NOT the printed eq. (13), whose shear stiffness term lacks two of its
/// four terms and swaps U and V, whose geometric term has the wrong sign, and which omits cross terms):
///   K_ji = df_j/dx_i = h A [ B_j^T C B_i + (D_j^T S~ D_i) I_3 ],
///   B_j = rows (r_uj U, r_vj V, r_uj V + r_vj U) (= d eps / d x_j),  D_j = (r_uj, r_vj),
/// the stiffness part B_j^T C B_i = c_UU U U^T + c_UV U V^T + c_VU V U^T + c_VV V V^T with alpha_j = (r_uj, 0, r_vj),
/// beta_j = (0, r_vj, r_uj), c_UU = alpha_j.C alpha_i, c_UV = alpha_j.C beta_i, c_VU = beta_j.C alpha_i,
/// c_VV = beta_j.C beta_i (all couplings kept), and the isotropic geometric part with S~ = S stabilised
/// (VolinoStabilization; the forces always use the true S).
/// Viscous part (eqs. 3, 7', 9', 12'): a linear Kelvin-Voigt stress sigma' = E' eps',
///   eps' = (U.U', V.V', U.V' + V.U'),  U' = sum_i r_ui v_i,  V' = sum_i r_vi v_i,
///   f'_j = h A B_j^T sigma'  (the resisting viscous force),  D_ji = df'_j/dv_i = h A B_j^T E' B_i  (exact),
/// without the position derivative df'/dx (omitted by the paper too: the dynamic Jacobian is not exact for large
/// viscosity; digest trap T10).
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "materials/curve.hpp"
#include "materials/formulation.hpp"

namespace edgefem {

/// Treatment of the stress in the geometric part of the tangent (forces never change):
/// - none: the exact tangent;
/// - clamp: Volino's sigma_uu <- max(sigma_uu, 0), sigma_vv <- max(sigma_vv, 0), sigma_uv unchanged (the
///   geometric part is PSD only when sigma_uv^2 <= max(sigma_uu,0) max(sigma_vv,0));
/// - eigen_clamp: S~ = the projection of the 2x2 stress S onto its nonnegative eigenvalues (closed form), so the
///   geometric part (D S~ D^T) (x) I_3 is always PSD; with a monotone law (C PSD) the element tangent is PSD.
enum class VolinoStabilization : std::uint8_t { none, clamp, eigen_clamp };

/// Names of the stabilisations, as job files spell them.
inline constexpr std::array<std::string_view, 3> kVolinoStabilizations = {"none", "clamp", "eigen-clamp"};
/// "none", "clamp", "eigen-clamp" -> the enum; throws std::invalid_argument listing the valid names.
VolinoStabilization parse_volino_stabilization(std::string_view name);
std::string_view to_string(VolinoStabilization s);

/// The warp direction of a material, resolved per triangle (see the file comment): `direction` projected into the
/// triangle plane, then turned by `angle` (radians) counter-clockwise about the triangle normal oriented along
/// `up`. With angle = 0 this is "a 3D vector projected into the triangle plane"; with a fixed direction (the
/// sheet's v axis) and an angle it is "an angle in the triangle's plane measured from a reference direction".
/// A triangle whose plane is (nearly, 1e-6 relative) normal to `direction` is rejected.
struct WarpDirection {
  std::array<double, 3> direction{0.0, 1.0, 0.0};
  double angle = 0.0;
  std::array<double, 3> up{0.0, 0.0, 1.0};
};

/// Strain-stress law (a closed variant): linear sigma = E eps (isotropic, orthotropic or a general symmetric
/// positive definite 3x3 E in the order (uu, vv, uv), engineering shear), or three decoupled curves (eq. 14).
/// Stresses are per unit volume (they are multiplied by the thickness); for membrane stresses in N/m use h = 1.
class VolinoLaw {
 public:
  enum class Kind : std::uint8_t { linear, curves };

  /// The zero law (sigma = 0).
  VolinoLaw();
  /// Eq. (4): E = young / (1 - nu^2) [[1, nu, 0], [nu, 1, 0], [0, 0, (1 - nu) / 2]] = the plane-stress StVK membrane
  /// (trbs). Throws std::invalid_argument unless young > 0 and -1 < poisson < 1.
  static VolinoLaw isotropic(double young, double poisson);
  /// Plane-stress orthotropic in the weft/warp axes: with nu_wp = poisson_weft_warp (warp contraction under weft
  /// tension: eps_vv = -nu_wp eps_uu), nu_pw = nu_wp E_warp / E_weft and q = 1 - nu_wp nu_pw,
  ///   E = [[E_weft / q, nu_wp E_warp / q, 0], [nu_wp E_warp / q, E_warp / q, 0], [0, 0, G]].
  /// Throws std::invalid_argument naming the violated condition unless E_weft, E_warp, G > 0 and
  /// nu_wp^2 < E_weft / E_warp (positive definiteness).
  static VolinoLaw orthotropic(double young_weft, double young_warp, double shear_modulus, double poisson_weft_warp);
  /// General linear law, E row-major 3x3. Throws std::invalid_argument unless E is symmetric (1e-12 relative)
  /// and positive definite.
  static VolinoLaw linear(const std::array<double, 9>& E);
  /// Decoupled curves (eq. 14): sigma_uu(eps_uu), sigma_vv(eps_vv), sigma_uv(eps_uv) with eps_uv = U.V the
  /// engineering shear (tan of the shear angle in Volino's eq. 15); each curve odd, C^1 (curve.hpp).
  static VolinoLaw curves(StressCurve weft, StressCurve warp, StressCurve shear);

  [[nodiscard]] Kind kind() const { return kind_; }
  /// The linear law's matrix (Kind::linear only; zero for curves).
  [[nodiscard]] const std::array<double, 9>& matrix() const { return E_; }
  /// The curves (Kind::curves only).
  [[nodiscard]] const std::array<StressCurve, 3>& curve_set() const { return curves_; }

  /// w(eps), sigma = dw/deps, C = dsigma/deps (row-major 3x3; may be null). Returns w.
  double evaluate(const double eps[3], double sigma[3], double C[9]) const;

 private:
  Kind kind_ = Kind::linear;
  std::array<double, 9> E_{};
  std::array<StressCurve, 3> curves_;
};

/// Everything a triangle needs from its region.
struct VolinoMaterial {
  double thickness = 1.0;  ///< h > 0: W = h A w
  WarpDirection warp;
  VolinoLaw law;
  /// Linear viscosity E' (row-major 3x3, symmetric positive semidefinite, order (uu, vv, uv)): sigma' = E' eps'.
  std::array<double, 9> viscosity{};
};

/// Throws std::invalid_argument naming the violated condition (thickness, viscosity matrix).
void check_volino_material(const VolinoMaterial& material);

/// Precomputed reference data of one triangle.
struct VolinoTriangle {
  std::array<double, 3> ru{}, rv{};                ///< eq. (6)
  double area = 0.0;                               ///< |d| / 2
  std::array<double, 3> weft{}, warp{}, normal{};  ///< the reference frame (unit vectors)
};

/// Frame and eq. (6) of the reference triangle X (3 vertices). Throws std::invalid_argument for a degenerate
/// triangle (zero area) or a warp direction normal to its plane.
VolinoTriangle volino_reference(std::span<const double, 9> X, const WarpDirection& warp);

/// S~ of the geometric part, (uu, vv, uv) order, for a stress sigma (uu, vv, uv).
std::array<double, 3> volino_geometric_stress(const std::array<double, 3>& sigma, VolinoStabilization stab);

/// One triangle's energy, strain, stress, f (9) and, if `stiffness`, K (9 x 9 row-major, K[3i+a][3j+b] =
/// df_(i,a)/dx_(j,b), exactly symmetric). x: the 3 current positions.
struct VolinoElement {
  double energy = 0.0;
  std::array<double, 3> strain{}, stress{};
  std::array<double, 9> f{};
  std::array<double, 81> K{};
};
void volino_element(const VolinoTriangle& ref, const VolinoMaterial& material, std::span<const double, 9> x,
                    VolinoStabilization stab, bool stiffness, VolinoElement& out);

/// The Volino membrane formulation, with the extras the generic interface lacks.
class VolinoMembrane : public TetFormulation {
 public:
  [[nodiscard]] virtual VolinoStabilization stabilization() const = 0;
  [[nodiscard]] virtual std::size_t n_triangles() const = 0;
  /// Per triangle (3 values each, (uu, vv, uv)): the strain (8)-(9) and the stress sigma(eps) (per unit volume).
  virtual void strain_stress(std::span<const double> x, std::span<double> strain, std::span<double> stress) const = 0;
  /// Reference frame of triangle t.
  [[nodiscard]] virtual const VolinoTriangle& reference(std::size_t t) const = 0;
  // viscous() / viscous_force_and_damping() (TetFormulation): true when some material has a nonzero viscosity
  // matrix; f' = dR/dv (R = sum h A eps'^T E' eps' / 2, the Rayleigh dissipation) and D = df'/dv (PSD).
};

/// Volino's membrane on `triangles` (3 vertex ids each) with reference positions `coords` (3 per vertex);
/// `materials` is a table and material_of_triangle[t] the index of triangle t's entry. Name "volino".
/// Evaluation is race-free (per-triangle results gathered per vertex and per edge through CSR lists, OpenMP, no
/// atomics) and bitwise independent of the thread count. Throws std::invalid_argument on inconsistent sizes,
/// out-of-range or repeated ids, invalid materials, degenerate triangles and warp directions normal to a triangle.
std::unique_ptr<VolinoMembrane> make_volino(std::span<const double> coords, std::span<const LocalIndex> triangles,
                                            std::span<const VolinoMaterial> materials,
                                            std::span<const std::int32_t> material_of_triangle,
                                            VolinoStabilization stab = VolinoStabilization::none);

}  // namespace edgefem
