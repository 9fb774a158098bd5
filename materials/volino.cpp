// SPDX-License-Identifier: BSD-3-Clause
/// \file volino.cpp
/// Volino's weft/warp triangle membrane (formulas in volino.hpp): the laws, the reference frame, the per-triangle
/// kernel and the formulation.
///
/// Evaluation: one OpenMP loop over triangles writes each triangle's State (U, V, sigma, S~, C: 18 doubles; for
/// force() only its 9 force components); then race-free gathers through CSR lists built at construction (triangle
/// order, so the sums are bitwise independent of the thread count): per vertex f(v) and K(v, v) (the element blocks
/// (i, i), computed from the State), per edge K(v0, v1) (element block (j, i), j < i local, or its transpose). The
/// transpose of K(v0, v1) is written for (v1, v0) and diagonal blocks are symmetrised, so K is exactly symmetric.
/// Writing the 54 distinct element-block entries to scratch instead was memory-bound (about 2x slower).
#include "materials/volino.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/number_text.hpp"
#include "materials/edge_assembly.hpp"
#include "materials/tet_geometry.hpp"
#include "mesh/topology.hpp"

namespace edgefem {

namespace {

std::string num(double v) { return number_text(v, 12); }

std::string vec3(const std::array<double, 3>& a) { return "(" + num(a[0]) + ", " + num(a[1]) + ", " + num(a[2]) + ")"; }

}  // namespace

VolinoStabilization parse_volino_stabilization(std::string_view name) {
  for (std::size_t i = 0; i < kVolinoStabilizations.size(); ++i)
    if (name == kVolinoStabilizations[i]) return static_cast<VolinoStabilization>(i);
  throw std::invalid_argument("unknown Volino stabilization '" + std::string(name) +
                              "' (expected none, clamp or eigen-clamp)");
}

std::string_view to_string(VolinoStabilization s) { return kVolinoStabilizations[static_cast<std::size_t>(s)]; }

// ---------------------------------------------------------------------------------------------------------
// Laws

VolinoLaw::VolinoLaw() = default;

VolinoLaw VolinoLaw::isotropic(double young, double poisson) {
  if (!(young > 0.0) || !std::isfinite(young))
    throw std::invalid_argument("isotropic Volino law: Young's modulus must be positive, got " + num(young));
  if (!(poisson > -1.0 && poisson < 1.0))
    throw std::invalid_argument("isotropic Volino law: plane-stress Poisson ratio must be in (-1, 1), got " +
                                num(poisson));
  VolinoLaw law;
  const double s = young / (1.0 - poisson * poisson);
  law.E_ = {s, s * poisson, 0.0, s * poisson, s, 0.0, 0.0, 0.0, young / (2.0 * (1.0 + poisson))};
  return law;
}

VolinoLaw VolinoLaw::orthotropic(double young_weft, double young_warp, double shear_modulus, double poisson_weft_warp) {
  const std::string who = "orthotropic Volino law: ";
  if (!(young_weft > 0.0) || !std::isfinite(young_weft))
    throw std::invalid_argument(who + "weft modulus must be positive, got " + num(young_weft));
  if (!(young_warp > 0.0) || !std::isfinite(young_warp))
    throw std::invalid_argument(who + "warp modulus must be positive, got " + num(young_warp));
  if (!(shear_modulus > 0.0) || !std::isfinite(shear_modulus))
    throw std::invalid_argument(who + "shear modulus must be positive, got " + num(shear_modulus));
  const double nu = poisson_weft_warp;
  const double q = 1.0 - nu * nu * young_warp / young_weft;
  if (!std::isfinite(nu) || !(q > 0.0))
    throw std::invalid_argument(who +
                                "not positive definite: the weft-warp Poisson ratio must satisfy nu^2 < "
                                "E_weft / E_warp, got nu = " +
                                num(nu) + ", E_weft / E_warp = " + num(young_weft / young_warp));
  VolinoLaw law;
  const double c = nu * young_warp / q;
  law.E_ = {young_weft / q, c, 0.0, c, young_warp / q, 0.0, 0.0, 0.0, shear_modulus};
  return law;
}

VolinoLaw VolinoLaw::linear(const std::array<double, 9>& E) {
  double scale = 0.0;
  for (double v : E) {
    if (!std::isfinite(v)) throw std::invalid_argument("linear Volino law: matrix entry " + num(v) + " is not finite");
    scale = std::max(scale, std::abs(v));
  }
  for (int r = 0; r < 3; ++r)
    for (int c = r + 1; c < 3; ++c)
      if (std::abs(E[3 * r + c] - E[3 * c + r]) > 1e-12 * scale)
        throw std::invalid_argument("linear Volino law: the 3x3 matrix is not symmetric (entries (" +
                                    std::to_string(r) + ", " + std::to_string(c) + ") = " + num(E[3 * r + c]) +
                                    " and (" + std::to_string(c) + ", " + std::to_string(r) +
                                    ") = " + num(E[3 * c + r]) + ")");
  const double m1 = E[0], m2 = E[0] * E[4] - E[1] * E[3];
  const double m3 = E[0] * (E[4] * E[8] - E[5] * E[7]) - E[1] * (E[3] * E[8] - E[5] * E[6]) +
                    E[2] * (E[3] * E[7] - E[4] * E[6]);
  if (!(m1 > 0.0 && m2 > 0.0 && m3 > 0.0))
    throw std::invalid_argument("linear Volino law: the 3x3 matrix is not positive definite (leading minors " +
                                num(m1) + ", " + num(m2) + ", " + num(m3) + ")");
  VolinoLaw law;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) law.E_[3 * r + c] = 0.5 * (E[3 * r + c] + E[3 * c + r]);
  return law;
}

VolinoLaw VolinoLaw::curves(StressCurve weft, StressCurve warp, StressCurve shear) {
  VolinoLaw law;
  law.kind_ = Kind::curves;
  law.curves_ = {std::move(weft), std::move(warp), std::move(shear)};
  return law;
}

double VolinoLaw::evaluate(const double eps[3], double sigma[3], double C[9]) const {
  if (kind_ == Kind::linear) {
    const double* E = E_.data();
    for (int r = 0; r < 3; ++r) sigma[r] = E[3 * r] * eps[0] + E[3 * r + 1] * eps[1] + E[3 * r + 2] * eps[2];
    if (C) std::memcpy(C, E, 9 * sizeof(double));
    return 0.5 * (eps[0] * sigma[0] + eps[1] * sigma[1] + eps[2] * sigma[2]);
  }
  double w = 0.0;
  if (C) std::fill(C, C + 9, 0.0);
  for (int m = 0; m < 3; ++m) {
    const CurveValue v = curves_[m].evaluate(eps[m]);
    sigma[m] = v.stress;
    if (C) C[4 * m] = v.slope;
    w += v.energy;
  }
  return w;
}

void check_volino_material(const VolinoMaterial& m) {
  if (!(m.thickness > 0.0) || !std::isfinite(m.thickness))
    throw std::invalid_argument("Volino material: thickness must be positive, got " + num(m.thickness));
  const auto& E = m.viscosity;
  double scale = 0.0;
  for (double v : E) {
    if (!std::isfinite(v)) throw std::invalid_argument("Volino material: viscosity entry " + num(v) + " is not finite");
    scale = std::max(scale, std::abs(v));
  }
  if (scale == 0.0) return;
  for (int r = 0; r < 3; ++r)
    for (int c = r + 1; c < 3; ++c)
      if (std::abs(E[3 * r + c] - E[3 * c + r]) > 1e-12 * scale)
        throw std::invalid_argument("Volino material: the viscosity matrix is not symmetric");
  // Positive semidefinite: every principal minor >= 0 (to round-off).
  const double tol = 1e-12;
  bool psd = E[0] >= 0.0 && E[4] >= 0.0 && E[8] >= 0.0;
  psd = psd && E[0] * E[4] - E[1] * E[3] >= -tol * scale * scale;
  psd = psd && E[0] * E[8] - E[2] * E[6] >= -tol * scale * scale;
  psd = psd && E[4] * E[8] - E[5] * E[7] >= -tol * scale * scale;
  const double det = E[0] * (E[4] * E[8] - E[5] * E[7]) - E[1] * (E[3] * E[8] - E[5] * E[6]) +
                     E[2] * (E[3] * E[7] - E[4] * E[6]);
  psd = psd && det >= -tol * scale * scale * scale;
  if (!psd) throw std::invalid_argument("Volino material: the viscosity matrix is not positive semidefinite");
}

// ---------------------------------------------------------------------------------------------------------
// Reference frame and the per-triangle kernel

VolinoTriangle volino_reference(std::span<const double, 9> X, const WarpDirection& warp) {
  using tetgeo::cross;
  using tetgeo::dot;
  const double e1[3] = {X[3] - X[0], X[4] - X[1], X[5] - X[2]};
  const double e2[3] = {X[6] - X[0], X[7] - X[1], X[8] - X[2]};
  const double e3[3] = {X[6] - X[3], X[7] - X[4], X[8] - X[5]};
  const std::array<double, 3> normal = triangle_normal(X.data(), X.data() + 3, X.data() + 6);  // length 2A
  double n[3] = {normal[0], normal[1], normal[2]};
  const double two_a = std::sqrt(dot(n, n));
  const double lmax = std::max({dot(e1, e1), dot(e2, e2), dot(e3, e3)});
  if (!(two_a > 1e-13 * lmax)) throw std::invalid_argument("triangle has zero reference area (degenerate element)");
  for (double& c : n) c /= two_a;
  if (dot(n, warp.up.data()) < 0.0)
    for (double& c : n) c = -c;
  const double* d = warp.direction.data();
  const double dn = dot(d, n), dd = std::sqrt(dot(d, d));
  double p[3] = {d[0] - dn * n[0], d[1] - dn * n[1], d[2] - dn * n[2]};
  const double pl = std::sqrt(dot(p, p));
  if (!std::isfinite(dd) || !(pl > 1e-6 * dd))
    throw std::invalid_argument("warp direction " + vec3(warp.direction) +
                                " is normal to the triangle (no projection into its plane, normal " +
                                vec3({n[0], n[1], n[2]}) + ")");
  for (double& c : p) c /= pl;
  double np[3];
  cross(n, p, np);
  const double ca = std::cos(warp.angle), sa = std::sin(warp.angle);
  VolinoTriangle r;
  for (int c = 0; c < 3; ++c) {
    r.warp[c] = ca * p[c] + sa * np[c];
    r.normal[c] = n[c];
  }
  cross(r.warp.data(), n, r.weft.data());
  const double u1 = dot(e1, r.weft.data()), v1 = dot(e1, r.warp.data());
  const double u2 = dot(e2, r.weft.data()), v2 = dot(e2, r.warp.data());
  const double det = u1 * v2 - u2 * v1;  // eq. (6) with u_0 = v_0 = 0
  r.ru = {(v1 - v2) / det, v2 / det, -v1 / det};
  r.rv = {(u2 - u1) / det, -u2 / det, u1 / det};
  r.area = 0.5 * std::abs(det);
  return r;
}

std::array<double, 3> volino_geometric_stress(const std::array<double, 3>& s, VolinoStabilization stab) {
  switch (stab) {
    case VolinoStabilization::none: return s;
    case VolinoStabilization::clamp: return {std::max(s[0], 0.0), std::max(s[1], 0.0), s[2]};
    case VolinoStabilization::eigen_clamp: {
      // S = [[a, c], [c, b]], eigenvalues m +- r. Both >= 0: S; both <= 0: 0; else lambda_1 e_1 e_1^T with
      // e_1 e_1^T = (S - lambda_2 I) / (2 r) = [[q + r, c], [c, r - q]] / (2 r), q = (a - b) / 2.
      const double a = s[0], b = s[1], c = s[2];
      const double m = 0.5 * (a + b), q = 0.5 * (a - b), r = std::sqrt(q * q + c * c);
      const double l1 = m + r, l2 = m - r;
      if (l2 >= 0.0) return s;
      if (l1 <= 0.0) return {0.0, 0.0, 0.0};
      const double k = l1 / (2.0 * r);
      return {k * (q + r), k * (r - q), k * c};
    }
  }
  return s;
}

namespace {

/// Local vertex pairs (j, i), j < i, of the three off-diagonal element blocks.
constexpr int kOff[3][2] = {{0, 1}, {0, 2}, {1, 2}};

/// Reference data the kernels read per triangle: eq. (6) and h A.
struct Geo {
  double ru[3], rv[3], ah;
};

/// A triangle's state at the current positions, all the force and tangent blocks need (18 doubles): U, V, the
/// stress s of the forces, the stress g of the geometric part (S~, or 0 for the damping), and the symmetric
/// C = dsigma/deps as (C00, C11, C22, C01, C02, C12).
struct State {
  double U[3], V[3], s[3], g[3], C[6];
};

/// U, V (or U', V' from velocities) = sum_i r_i p_i.
inline void weft_warp(const double* ru, const double* rv, const double* p0, const double* p1, const double* p2,
                      double* U, double* V) {
  for (int c = 0; c < 3; ++c) {
    U[c] = ru[0] * p0[c] + ru[1] * p1[c] + ru[2] * p2[c];
    V[c] = rv[0] * p0[c] + rv[1] * p1[c] + rv[2] * p2[c];
  }
}

/// Strain (8)-(9) from U, V.
inline void green_strain(const double* U, const double* V, double* eps) {
  eps[0] = 0.5 * (tetgeo::dot(U, U) - 1.0);
  eps[1] = 0.5 * (tetgeo::dot(V, V) - 1.0);
  eps[2] = tetgeo::dot(U, V);
}

/// Elastic state of one triangle; returns the energy h A w. With tangent = false, g and C are not set.
inline double elastic_state(const Geo& geo, const VolinoLaw& law, VolinoStabilization stab, const double* p0,
                            const double* p1, const double* p2, bool tangent, State& st, double* eps_out = nullptr) {
  double eps[3], C[9];
  weft_warp(geo.ru, geo.rv, p0, p1, p2, st.U, st.V);
  green_strain(st.U, st.V, eps);
  const double w = law.evaluate(eps, st.s, tangent ? C : nullptr);
  if (eps_out) std::copy(eps, eps + 3, eps_out);
  if (tangent) {
    const auto g = volino_geometric_stress({st.s[0], st.s[1], st.s[2]}, stab);
    st.g[0] = g[0], st.g[1] = g[1], st.g[2] = g[2];
    st.C[0] = C[0], st.C[1] = C[4], st.C[2] = C[8], st.C[3] = C[1], st.C[4] = C[2], st.C[5] = C[5];
  }
  return geo.ah * w;
}

/// Viscous state: eps' = (U.U', V.V', U.V' + V.U'), s = E' eps', C = E', no geometric part.
inline void viscous_state(const Geo& geo, const double* Ev, const double* p0, const double* p1, const double* p2,
                          const double* q0, const double* q1, const double* q2, State& st) {
  double Ud[3], Vd[3];
  weft_warp(geo.ru, geo.rv, p0, p1, p2, st.U, st.V);
  weft_warp(geo.ru, geo.rv, q0, q1, q2, Ud, Vd);
  const double er[3] = {tetgeo::dot(st.U, Ud), tetgeo::dot(st.V, Vd), tetgeo::dot(st.U, Vd) + tetgeo::dot(st.V, Ud)};
  for (int r = 0; r < 3; ++r) st.s[r] = Ev[3 * r] * er[0] + Ev[3 * r + 1] * er[1] + Ev[3 * r + 2] * er[2];
  st.g[0] = st.g[1] = st.g[2] = 0.0;
  st.C[0] = Ev[0], st.C[1] = Ev[4], st.C[2] = Ev[8], st.C[3] = Ev[1], st.C[4] = Ev[2], st.C[5] = Ev[5];
}

/// f_j = ah (a_j U + b_j V), a_j = s_uu r_uj + s_uv r_vj, b_j = s_uv r_uj + s_vv r_vj.
inline void state_force(const Geo& geo, const State& st, int j, double* f) {
  const double* s = st.s;
  const double a = geo.ah * (s[0] * geo.ru[j] + s[2] * geo.rv[j]), b = geo.ah * (s[2] * geo.ru[j] + s[1] * geo.rv[j]);
  for (int c = 0; c < 3; ++c) f[c] = a * st.U[c] + b * st.V[c];
}

/// Block (j, i) = ah [B_j^T C B_i + (D_j^T g D_i) I] (row-major 3x3); exactly symmetric when i == j.
/// With alpha_i = (ru_i, 0, rv_i), beta_i = (0, rv_i, ru_i): B_j^T C B_i = c_UU U U^T + c_UV U V^T + c_VU V U^T +
/// c_VV V V^T, c_UU = alpha_j.C alpha_i, c_UV = alpha_j.C beta_i, c_VU = beta_j.C alpha_i, c_VV = beta_j.C beta_i.
inline void state_block(const Geo& geo, const State& st, int j, int i, double* B) {
  const double *ru = geo.ru, *rv = geo.rv, *C = st.C, *U = st.U, *V = st.V, *g = st.g;
  // C alpha_i and C beta_i (C symmetric: rows (C00, C01, C02), (C01, C11, C12), (C02, C12, C22)).
  const double ca0 = C[0] * ru[i] + C[4] * rv[i], ca1 = C[3] * ru[i] + C[5] * rv[i], ca2 = C[4] * ru[i] + C[2] * rv[i];
  const double cb0 = C[3] * rv[i] + C[4] * ru[i], cb1 = C[1] * rv[i] + C[5] * ru[i], cb2 = C[5] * rv[i] + C[2] * ru[i];
  const double ah = geo.ah;
  const double cuu = ah * (ru[j] * ca0 + rv[j] * ca2), cuv = ah * (ru[j] * cb0 + rv[j] * cb2);
  const double cvu = ah * (rv[j] * ca1 + ru[j] * ca2), cvv = ah * (rv[j] * cb1 + ru[j] * cb2);
  const double gg = ah * (ru[j] * ru[i] * g[0] + rv[j] * rv[i] * g[1] + (ru[j] * rv[i] + rv[j] * ru[i]) * g[2]);
  double P[3], Q[3];  // row r of the block: U_r P + V_r Q
  for (int c = 0; c < 3; ++c) {
    P[c] = cuu * U[c] + cuv * V[c];
    Q[c] = cvu * U[c] + cvv * V[c];
  }
  if (i == j) {
    for (int r = 0; r < 3; ++r)
      for (int c = r; c < 3; ++c) B[3 * r + c] = U[r] * P[c] + V[r] * Q[c];
    B[3] = B[1];
    B[6] = B[2];
    B[7] = B[5];
  } else {
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) B[3 * r + c] = U[r] * P[c] + V[r] * Q[c];
  }
  B[0] += gg;
  B[4] += gg;
  B[8] += gg;
}

/// The 9 x 9 element matrix (K[3j+a][3i+b]) and forces of a state.
void expand(const Geo& geo, const State& st, double* f, std::array<double, 81>* K) {
  for (int j = 0; j < 3; ++j) state_force(geo, st, j, f + 3 * j);
  if (!K) return;
  auto put = [&](int j, int i, const double* B, bool transpose) {
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) (*K)[9 * (3 * j + r) + 3 * i + c] = transpose ? B[3 * c + r] : B[3 * r + c];
  };
  double B[9];
  for (int i = 0; i < 3; ++i) {
    state_block(geo, st, i, i, B);
    put(i, i, B, false);
  }
  for (const auto& p : kOff) {
    state_block(geo, st, p[0], p[1], B);
    put(p[0], p[1], B, false);
    put(p[1], p[0], B, true);
  }
}

Geo geo_of(const VolinoTriangle& ref, double thickness) {
  Geo g;
  for (int i = 0; i < 3; ++i) g.ru[i] = ref.ru[i], g.rv[i] = ref.rv[i];
  g.ah = ref.area * thickness;
  return g;
}

}  // namespace

void volino_element(const VolinoTriangle& ref, const VolinoMaterial& material, std::span<const double, 9> x,
                    VolinoStabilization stab, bool stiffness, VolinoElement& out) {
  const Geo geo = geo_of(ref, material.thickness);
  State st;
  out.energy = elastic_state(geo, material.law, stab, x.data(), x.data() + 3, x.data() + 6, stiffness, st,
                             out.strain.data());
  std::copy(st.s, st.s + 3, out.stress.begin());
  expand(geo, st, out.f.data(), stiffness ? &out.K : nullptr);
}

// ---------------------------------------------------------------------------------------------------------
// The formulation

namespace {

class VolinoForm final : public edge_assembly::EdgeFormulation<VolinoMembrane> {
 public:
  VolinoForm(std::span<const double> coords, std::span<const LocalIndex> triangles,
             std::span<const VolinoMaterial> materials, std::span<const std::int32_t> material_of_triangle,
             VolinoStabilization stab);

  [[nodiscard]] std::string_view name() const override { return "volino"; }
  [[nodiscard]] double energy(std::span<const double> x) const override;
  void force(std::span<const double> x, std::span<double> f) const override;
  void force_and_stiffness(std::span<const double> x, std::span<double> f, std::span<double> blocks) const override;
  [[nodiscard]] std::size_t bytes() const override;

  [[nodiscard]] VolinoStabilization stabilization() const override { return stab_; }
  [[nodiscard]] std::size_t n_triangles() const override { return static_cast<std::size_t>(nt_); }
  void strain_stress(std::span<const double> x, std::span<double> strain, std::span<double> stress) const override;
  [[nodiscard]] const VolinoTriangle& reference(std::size_t t) const override { return refs_.at(t); }
  [[nodiscard]] bool viscous() const override { return viscous_; }
  void viscous_force_and_damping(std::span<const double> x, std::span<const double> v, std::span<double> f,
                                 std::span<double> blocks) const override;

 private:
  void check_x(std::span<const double> x, const char* what = "x") const;
  void check_out(std::span<const double> f, std::span<const double> blocks, bool want_blocks) const;
  /// f(v), K(v, v) and K(edges) from the per-triangle states st_ (blocks may be null: forces only).
  void gather(double* f, double* blocks) const;
  [[nodiscard]] const double* pos(const double* x, std::int64_t t, int i) const {
    return x + 3 * std::int64_t{tri_[3 * t + i]};
  }

  std::int64_t nt_ = 0;
  VolinoStabilization stab_;
  bool viscous_ = false;
  std::vector<LocalIndex> tri_;
  std::vector<std::int32_t> mat_;
  std::vector<VolinoMaterial> materials_;
  std::vector<Geo> geo_;
  std::vector<VolinoTriangle> refs_;
  edge_assembly::Csr<std::int64_t> v_list_;  ///< vertex -> t << 2 | local index
  edge_assembly::Csr<std::int64_t> e_list_;  ///< edge -> t << 3 | off-slot << 1 | transpose
  mutable std::vector<State> st_;            ///< scratch: per-triangle state (tangent and damping)
  mutable std::vector<double> ft_;           ///< scratch: per-triangle forces, 9 each (force() only)
};

VolinoForm::VolinoForm(std::span<const double> coords, std::span<const LocalIndex> triangles,
                       std::span<const VolinoMaterial> materials, std::span<const std::int32_t> material_of_triangle,
                       VolinoStabilization stab)
    : EdgeFormulation(coords), stab_(stab) {
  const std::string who = "make_volino: ";
  tetgeo::check_sizes(coords.size(), triangles.size(), 3, "make_volino", "triangles", "triangle");
  nt_ = static_cast<std::int64_t>(triangles.size() / 3);
  if (static_cast<std::int64_t>(material_of_triangle.size()) != nt_)
    throw std::invalid_argument(who + std::to_string(material_of_triangle.size()) + " material ids for " +
                                std::to_string(nt_) + " triangles");
  if (static_cast<int>(stab) > 2) throw std::invalid_argument(who + "invalid stabilization");
  for (std::size_t k = 0; k < materials.size(); ++k) {
    try {
      check_volino_material(materials[k]);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(who + "material " + std::to_string(k) + ": " + e.what());
    }
    for (double v : materials[k].viscosity) viscous_ = viscous_ || v != 0.0;
  }
  materials_.assign(materials.begin(), materials.end());
  for (auto& m : materials_)  // exactly symmetric E' (checked to 1e-12 above): exactly symmetric damping blocks
    for (int r = 0; r < 3; ++r)
      for (int c = r + 1; c < 3; ++c)
        m.viscosity[3 * r + c] = m.viscosity[3 * c + r] = 0.5 * (m.viscosity[3 * r + c] + m.viscosity[3 * c + r]);
  tri_.assign(triangles.begin(), triangles.end());
  mat_.assign(material_of_triangle.begin(), material_of_triangle.end());
  geo_.resize(nt_);
  refs_.resize(nt_);
  const std::int64_t nv = n_vertices_;
  for (std::int64_t t = 0; t < nt_; ++t) {
    const LocalIndex* v = tri_.data() + 3 * t;
    for (int i = 0; i < 3; ++i)
      if (v[i] < 0 || v[i] >= nv)
        throw std::invalid_argument(who + "triangle " + std::to_string(t) + " has vertex id " + std::to_string(v[i]) +
                                    ", expected 0.." + std::to_string(nv - 1));
    if (v[0] == v[1] || v[1] == v[2] || v[2] == v[0])
      throw std::invalid_argument(who + "triangle " + std::to_string(t) + " repeats a vertex");
    const std::int32_t m = mat_[t];
    if (m < 0 || static_cast<std::size_t>(m) >= materials_.size())
      throw std::invalid_argument(who + "triangle " + std::to_string(t) + " has material id " + std::to_string(m) +
                                  ", expected 0.." + std::to_string(static_cast<std::int64_t>(materials_.size()) - 1));
    std::array<double, 9> X;
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c) X[3 * i + c] = coords[3 * std::size_t(v[i]) + c];
    try {
      refs_[t] = volino_reference(X, materials_[m].warp);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(who + "triangle " + std::to_string(t) + " (material " + std::to_string(m) +
                                  "): " + e.what());
    }
    geo_[t] = geo_of(refs_[t], materials_[m].thickness);
  }
  // Unique edges (v0 < v1, sorted); off-diagonal slot s = (j, i) of a triangle is its edge opposite vertex 2 - s.
  const TriangleEdges te = build_triangle_edges(tri_);
  edges_ = edge_assembly::EdgeBlocks(n_vertices_, te.edges, {.edge_vertices = false, .vertex_gather = false});
  v_list_ = edge_assembly::build_csr<std::int64_t>(nv, [&](auto&& sink) {
    for (std::int64_t t = 0; t < nt_; ++t)
      for (int i = 0; i < 3; ++i) sink(tri_[3 * t + i], t << 2 | i);
  });
  e_list_ = edge_assembly::build_csr<std::int64_t>(edges_.n_edges(), [&](auto&& sink) {
    for (std::int64_t t = 0; t < nt_; ++t)
      for (int s = 0; s < 3; ++s) {
        const bool transpose = tri_[3 * t + kOff[s][0]] > tri_[3 * t + kOff[s][1]];
        sink(te.triangle_edges[3 * t + 2 - s], t << 3 | s << 1 | (transpose ? 1 : 0));
      }
  });
}

std::size_t VolinoForm::bytes() const {
  auto vb = [](const auto& vec) { return vec.capacity() * sizeof(vec[0]); };
  std::size_t curves = 0;
  for (const auto& m : materials_)
    for (const auto& c : m.law.curve_set()) curves += c.bytes();
  return vb(tri_) + vb(mat_) + vb(materials_) + curves + vb(geo_) + vb(refs_) + v_list_.bytes() + e_list_.bytes() +
         edges_.bytes() + vb(st_) + vb(ft_);
}

void VolinoForm::check_x(std::span<const double> x, const char* what) const {
  if (x.size() != 3 * static_cast<std::size_t>(n_vertices_))
    throw std::invalid_argument(std::string("volino: ") + what + " holds " + std::to_string(x.size()) +
                                " values, expected " + std::to_string(3 * static_cast<std::size_t>(n_vertices_)));
}

void VolinoForm::check_out(std::span<const double> f, std::span<const double> blocks, bool want_blocks) const {
  if (f.size() != 3 * static_cast<std::size_t>(n_vertices_))
    throw std::invalid_argument("volino: f holds " + std::to_string(f.size()) + " values, expected " +
                                std::to_string(3 * static_cast<std::size_t>(n_vertices_)));
  if (want_blocks) edges_.check_blocks(blocks, "volino");
}

double VolinoForm::energy(std::span<const double> x) const {
  check_x(x);
  const double* xp = x.data();
  return edge_assembly::ordered_sum(nt_, [&](std::int64_t t) {
    const Geo& g = geo_[t];
    double U[3], V[3], eps[3], sig[3];
    weft_warp(g.ru, g.rv, pos(xp, t, 0), pos(xp, t, 1), pos(xp, t, 2), U, V);
    green_strain(U, V, eps);
    return g.ah * materials_[mat_[t]].law.evaluate(eps, sig, nullptr);
  });
}

void VolinoForm::gather(double* f, double* blocks) const {
  const State* st = st_.data();
  const std::int64_t nv = n_vertices_;
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < nv; ++v) {
    double fv[3] = {0.0, 0.0, 0.0};
    double D[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (std::int64_t k = v_list_.ptr[v]; k < v_list_.ptr[v + 1]; ++k) {
      const std::int64_t code = v_list_.codes[k], t = code >> 2;
      const int i = static_cast<int>(code & 3);
      double fi[3];
      state_force(geo_[t], st[t], i, fi);
      fv[0] += fi[0];
      fv[1] += fi[1];
      fv[2] += fi[2];
      if (blocks) {
        double B[9];
        state_block(geo_[t], st[t], i, i, B);
        for (int q = 0; q < 9; ++q) D[q] += B[q];
      }
    }
    f[3 * v] = fv[0];
    f[3 * v + 1] = fv[1];
    f[3 * v + 2] = fv[2];
    if (blocks) edges_.write_diagonal(static_cast<LocalIndex>(v), D, blocks);
  }
  if (!blocks) return;
  double* kedge = edges_.edge_blocks(blocks);
  const std::int64_t ne = edges_.n_edges();
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < ne; ++e) {
    double K[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (std::int64_t k = e_list_.ptr[e]; k < e_list_.ptr[e + 1]; ++k) {
      const std::int64_t code = e_list_.codes[k], t = code >> 3;
      const int slot = static_cast<int>((code >> 1) & 3);
      double B[9];
      state_block(geo_[t], st[t], kOff[slot][0], kOff[slot][1], B);
      if (code & 1) {
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) K[3 * r + c] += B[3 * c + r];
      } else {
        for (int q = 0; q < 9; ++q) K[q] += B[q];
      }
    }
    edge_assembly::write_edge_block(kedge, e, K);
  }
}

void VolinoForm::force(std::span<const double> x, std::span<double> f) const {
  check_x(x);
  check_out(f, {}, false);
  // Forces only: each triangle's 9 force components, then a per-vertex gather (half the scratch of a State).
  ft_.resize(9 * static_cast<std::size_t>(nt_));
  const double* xp = x.data();
  double* ft = ft_.data();
  const std::int64_t nt = nt_;
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < nt; ++t) {
    State s;
    elastic_state(geo_[t], materials_[mat_[t]].law, stab_, pos(xp, t, 0), pos(xp, t, 1), pos(xp, t, 2), false, s);
    for (int j = 0; j < 3; ++j) state_force(geo_[t], s, j, ft + 9 * t + 3 * j);
  }
  const std::int64_t nv = n_vertices_;
  double* fp = f.data();
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < nv; ++v) {
    double fv[3] = {0.0, 0.0, 0.0};
    for (std::int64_t k = v_list_.ptr[v]; k < v_list_.ptr[v + 1]; ++k) {
      const std::int64_t code = v_list_.codes[k];
      const double* fi = ft + 9 * (code >> 2) + 3 * (code & 3);
      fv[0] += fi[0];
      fv[1] += fi[1];
      fv[2] += fi[2];
    }
    fp[3 * v] = fv[0];
    fp[3 * v + 1] = fv[1];
    fp[3 * v + 2] = fv[2];
  }
}

void VolinoForm::force_and_stiffness(std::span<const double> x, std::span<double> f, std::span<double> blocks) const {
  check_x(x);
  check_out(f, blocks, true);
  st_.resize(static_cast<std::size_t>(nt_));
  const double* xp = x.data();
  State* st = st_.data();
  const std::int64_t nt = nt_;
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < nt; ++t)
    elastic_state(geo_[t], materials_[mat_[t]].law, stab_, pos(xp, t, 0), pos(xp, t, 1), pos(xp, t, 2), true, st[t]);
  gather(f.data(), blocks.data());
}

void VolinoForm::strain_stress(std::span<const double> x, std::span<double> strain, std::span<double> stress) const {
  check_x(x);
  if (strain.size() != 3 * static_cast<std::size_t>(nt_) || stress.size() != strain.size())
    throw std::invalid_argument("volino: strain and stress need 3 values per triangle (" + std::to_string(3 * nt_) +
                                ")");
  const double* xp = x.data();
  const std::int64_t nt = nt_;
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < nt; ++t) {
    State s;
    elastic_state(geo_[t], materials_[mat_[t]].law, stab_, pos(xp, t, 0), pos(xp, t, 1), pos(xp, t, 2), false, s,
                  strain.data() + 3 * t);
    std::copy(s.s, s.s + 3, stress.data() + 3 * t);
  }
}

void VolinoForm::viscous_force_and_damping(std::span<const double> x, std::span<const double> v, std::span<double> f,
                                           std::span<double> blocks) const {
  check_x(x);
  check_x(v, "v");
  const bool want = !blocks.empty();
  check_out(f, blocks, want);
  st_.resize(static_cast<std::size_t>(nt_));
  const double* xp = x.data();
  const double* vp = v.data();
  State* st = st_.data();
  const std::int64_t nt = nt_;
#pragma omp parallel for schedule(static)
  for (std::int64_t t = 0; t < nt; ++t)
    viscous_state(geo_[t], materials_[mat_[t]].viscosity.data(), pos(xp, t, 0), pos(xp, t, 1), pos(xp, t, 2),
                  pos(vp, t, 0), pos(vp, t, 1), pos(vp, t, 2), st[t]);
  gather(f.data(), want ? blocks.data() : nullptr);
}

}  // namespace

std::unique_ptr<VolinoMembrane> make_volino(std::span<const double> coords, std::span<const LocalIndex> triangles,
                                            std::span<const VolinoMaterial> materials,
                                            std::span<const std::int32_t> material_of_triangle,
                                            VolinoStabilization stab) {
  return std::make_unique<VolinoForm>(coords, triangles, materials, material_of_triangle, stab);
}

}  // namespace edgefem
