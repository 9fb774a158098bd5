// SPDX-License-Identifier: BSD-3-Clause
/// \file trbs.cpp
/// Delingette's triangular springs in edge form: "trbs" (biquadratic, = plane-stress StVK membrane), "trqs"
/// (quadratic) and "springs" (tensile part of trqs); "linear-membrane" (the trbs tangent at rest, at the end);
/// the spring-constant functions and make_membrane.
///
/// Energy (membrane.hpp for the spring constants), written with an elongation phi per edge E = (v0, v1), v0 < v1,
/// p(E) = x(v0) - x(v1):  trbs phi = |p|^2 - L^2,  trqs/springs phi = |p| - L, and internal constants
///   W = 1/2 sum_E a_E phi_E^2 + sum_T sum_{vertex k of T} b_{T,k} phi_i phi_j      (i, j the edges of T at k)
/// with a_E = sum_{T ∋ E} tensile/2 (trbs) or tensile (trqs), b = angular/2 (trbs) or angular (trqs).
/// With s_E = dW/dphi_E = a_E phi_E + sum_{T ∋ E} (b at the two vertices of E times phi of T's other edge at that
/// vertex) and gamma_E = dphi/dp (trbs 2p, trqs p/|p|):
///   f(v0) += s_E gamma_E, f(v1) -= s_E gamma_E, W = 1/2 sum_E phi_E s_E,
///   K(v0, v1) = -(a_E gamma_E gamma_E^T + s_E d2phi/dp2) + sum_{T ∋ E} K_ang(T, E),
/// d2phi/dp2 = 2 I (trbs), (I - n n^T)/|p| (trqs). For T = (k, u = v0, w = v1) with local edge vectors
/// d0 = x(u) - x(w), d1 = x(w) - x(k), d2 = x(k) - x(u) (g_i = gamma at d_i) and b_k, b_u, b_w:
///   K_ang = b_w g0 g1^T + b_u g2 g0^T - b_k g2 g1^T = g0 (b_w g1)^T + g2 (b_u g0 - b_k g1)^T,
/// the sum over the pairs (edge at u, edge at w) of T of b_pair t(u, .) t(w, .) gamma gamma^T. This is the full
/// tangent: the s_E d2phi/dp2 term carries the geometric part of both tensile and angular springs.
/// K(v, v) = -sum_w K(v, w) (translation invariance), symmetrised: the assembled K is exactly symmetric.
///
/// Damping (membrane.hpp, Delingette §V-C): the damped elongation phi^D = phi + c zeta_T dphi/dt (c = 1/2 trbs,
/// 1 trqs) enters the spring stresses linearly, so f(x, v) = f(x) + f_v with f_v = G^T A_v G v, G = dphi/dx, A_v
/// the constants of W scaled per triangle by c zeta_T (av_ per edge, ang_v_ per angular entry, same CSR layout as
/// ang_). viscous_force_and_damping runs the same three gathers with phi -> dphi/dt = gamma_E . (v(v0) - v(v1)),
/// (a, b) -> (a_v, b_v) and without the s_E d2phi/dp2 term: D = G^T A_v G (the material part of K).
///
/// Construction (per-triangle loop) accumulates a_E into the edges and writes each triangle's angular constants
/// inline into per-edge CSR lists (one entry per (triangle, edge), oriented for (v0, v1)); evaluation is three
/// race-free gathers (OpenMP, no atomics, bitwise independent of the thread count):
///   edges: phi (and 1/|p| for trqs);  edges: s_E and K(E) from the edge's entries;  vertices: f(v), K(v, v).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "materials/constant_stiffness.hpp"
#include "materials/edge_assembly.hpp"
#include "materials/membrane.hpp"
#include "materials/tet_geometry.hpp"
#include "mesh/topology.hpp"

namespace edgefem {

namespace {

/// Sizes and vertex ids of a triangle list (3 ids per triangle, distinct, < n_coords / 3).
void check_triangles(std::size_t n_coords, std::span<const LocalIndex> triangles, const char* who) {
  tetgeo::check_sizes(n_coords, triangles.size(), 3, who, "triangles", "triangle");
  const std::int64_t nv = static_cast<std::int64_t>(n_coords / 3);
  for (std::size_t t = 0; t < triangles.size() / 3; ++t) {
    const LocalIndex* v = triangles.data() + 3 * t;
    for (int i = 0; i < 3; ++i)
      if (v[i] < 0 || v[i] >= nv)
        throw std::invalid_argument(std::string(who) + ": triangle " + std::to_string(t) + " has vertex id " +
                                    std::to_string(v[i]) + ", expected 0.." + std::to_string(nv - 1));
    if (v[0] == v[1] || v[1] == v[2] || v[2] == v[0])
      throw std::invalid_argument(std::string(who) + ": triangle " + std::to_string(t) + " repeats a vertex");
  }
}

/// check_triangles plus the material table and ids.
void check_triangle_materials(std::size_t n_coords, std::span<const LocalIndex> triangles,
                              std::span<const MembraneMaterial> materials,
                              std::span<const std::int32_t> material_of_triangle, const char* who) {
  check_triangles(n_coords, triangles, who);
  if (material_of_triangle.size() != triangles.size() / 3)
    throw std::invalid_argument(std::string(who) + ": " + std::to_string(material_of_triangle.size()) +
                                " material ids for " + std::to_string(triangles.size() / 3) + " triangles");
  for (std::size_t t = 0; t < material_of_triangle.size(); ++t)
    if (material_of_triangle[t] < 0 || static_cast<std::size_t>(material_of_triangle[t]) >= materials.size())
      throw std::invalid_argument(std::string(who) + ": triangle " + std::to_string(t) + " has material id " +
                                  std::to_string(material_of_triangle[t]) + ", expected 0.." +
                                  std::to_string(static_cast<std::int64_t>(materials.size()) - 1));
  for (std::size_t k = 0; k < materials.size(); ++k) {
    try {
      check_membrane_material(materials[k]);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string(who) + ": material " + std::to_string(k) + ": " + e.what());
    }
  }
}

}  // namespace

void check_membrane_material(const MembraneMaterial& m) {
  if (!(m.young > 0.0) || !std::isfinite(m.young))
    throw std::invalid_argument("membrane material: Young's modulus must be positive, got " + std::to_string(m.young));
  if (!(m.poisson > -1.0 && m.poisson < 1.0))
    throw std::invalid_argument("membrane material: plane-stress Poisson ratio must be in (-1, 1), got " +
                                std::to_string(m.poisson));
  if (!(m.thickness > 0.0) || !std::isfinite(m.thickness))
    throw std::invalid_argument("membrane material: thickness must be positive, got " + std::to_string(m.thickness));
  if (!(m.damping >= 0.0) || !std::isfinite(m.damping))
    throw std::invalid_argument("membrane material: damping must be >= 0 and finite, got " + std::to_string(m.damping));
}

TriangleSprings trbs_springs(std::span<const double, 9> X, const MembraneMaterial& m) {
  check_membrane_material(m);
  double e[3][3];  // e[i] = X(i+2) - X(i+1): the edge opposite vertex i
  for (int i = 0; i < 3; ++i)
    for (int c = 0; c < 3; ++c) e[i][c] = X[3 * ((i + 2) % 3) + c] - X[3 * ((i + 1) % 3) + c];
  const double two_a = 2.0 * triangle_area(X.data(), X.data() + 3, X.data() + 6);
  const double lmax = std::max({tetgeo::dot(e[0], e[0]), tetgeo::dot(e[1], e[1]), tetgeo::dot(e[2], e[2])});
  if (!(two_a > 1e-13 * lmax)) throw std::invalid_argument("triangle has zero reference area (degenerate element)");
  // cot a_i = (X(i+1) - X(i)) . (X(i+2) - X(i)) / 2A = -e(i+2) . e(i+1) / 2A
  double cot[3];
  for (int i = 0; i < 3; ++i) cot[i] = -tetgeo::dot(e[(i + 2) % 3], e[(i + 1) % 3]) / two_a;
  const double nu = m.poisson;
  const double lp2m = m.young / (1.0 - nu * nu);   // lambda + 2 mu, lambda = E nu / (1 - nu^2)
  const double mu = m.young / (2.0 * (1.0 + nu));  // mu = E / (2 (1 + nu))
  const double s = m.thickness / (4.0 * two_a);    // h / (8 A)
  TriangleSprings r;
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3, k = (i + 2) % 3;
    r.tensile[i] = s * (lp2m * cot[i] * cot[i] + mu);
    r.angular[k] = s * (lp2m * cot[i] * cot[j] - mu);  // the angular spring at k couples edges i and j
  }
  r.damping = m.damping;
  return r;
}

TriangleSprings trqs_springs(std::span<const double, 9> X, const MembraneMaterial& m) {
  TriangleSprings r = trbs_springs(X, m);
  double len[3];
  for (int i = 0; i < 3; ++i) {
    double q = 0.0;
    for (int c = 0; c < 3; ++c) {
      const double d = X[3 * ((i + 2) % 3) + c] - X[3 * ((i + 1) % 3) + c];
      q += d * d;
    }
    len[i] = std::sqrt(q);
  }
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3, k = (i + 2) % 3;
    r.tensile[i] *= 2.0 * len[i] * len[i];  // kappa_i = 2 L_i^2 k_i
    r.angular[k] *= 2.0 * len[i] * len[j];  // gamma_k = 2 L_i L_j c_k
  }
  return r;
}

namespace {

using edge_assembly::Csr;

/// One triangle's angular terms on edge E = (u = v0(E), w = v1(E)); k is the triangle's third vertex.
struct AngEntry {
  LocalIndex k;
  LocalIndex e1;      ///< edge (w, k)
  LocalIndex e2;      ///< edge (k, u)
  double bk, bu, bw;  ///< internal pair constants at k, u, w
};

template <SpringStrain kStrain>
class TriangleSpringForm final : public edge_assembly::EdgeFormulation<> {
  static constexpr bool kSq = kStrain == SpringStrain::squared_length;

 public:
  TriangleSpringForm(std::string name, std::span<const double> coords, std::span<const LocalIndex> triangles,
                     std::span<const TriangleSprings> springs, bool angular);

  [[nodiscard]] std::string_view name() const override { return name_; }
  [[nodiscard]] double energy(std::span<const double> x) const override;
  void force(std::span<const double> x, std::span<double> f) const override;
  void force_and_stiffness(std::span<const double> x, std::span<double> f, std::span<double> blocks) const override;
  [[nodiscard]] bool viscous() const override { return damped_; }
  void viscous_force_and_damping(std::span<const double> x, std::span<const double> v, std::span<double> f,
                                 std::span<double> blocks) const override;
  [[nodiscard]] std::size_t bytes() const override {
    using edge_assembly::vector_bytes;
    return edges_.bytes() + vector_bytes(rest_) + vector_bytes(a_) + ang_.bytes() + vector_bytes(phi_) +
           vector_bytes(inv_len_) + vector_bytes(s_) + vector_bytes(av_) + vector_bytes(ang_v_) + vector_bytes(rate_);
  }

 private:
  void check_x(std::span<const double> x) const;
  void elongations(const double* x) const;             ///< phi_ (and inv_len_)
  void rates(const double* x, const double* v) const;  ///< rate_ = dphi/dt (and inv_len_)
  /// s_ and (kedge) K(E), K(E)^T; kVisc: from rate_, av_, ang_v_, without the geometric term (f_v, D).
  template <bool kVisc>
  void edge_terms(const double* x, double* kedge) const;
  void vertex_terms(const double* x, double* f, double* blocks, const double* kedge) const;

  std::string name_;
  std::int64_t n_edges_ = 0;
  std::vector<double> rest_;                  ///< L^2 (trbs) or L (trqs)
  std::vector<double> a_;                     ///< internal tensile constant a_E
  Csr<AngEntry> ang_;                         ///< edge -> angular entries
  bool damped_ = false;                       ///< some triangle has zeta > 0 (av_, ang_v_, rate_ allocated)
  std::vector<double> av_;                    ///< viscous tensile constant: sum_{T ∋ E} c zeta_T a_{T,E}
  std::vector<std::array<double, 3>> ang_v_;  ///< viscous (bk, bu, bw) = c zeta_T (bk, bu, bw), parallel to ang_.codes
  mutable std::vector<double> phi_, inv_len_, s_;  ///< scratch per edge: phi, 1/|p| (trqs), s
  mutable std::vector<double> rate_;               ///< scratch per edge: dphi/dt (damped only)
};

template <SpringStrain kStrain>
TriangleSpringForm<kStrain>::TriangleSpringForm(std::string name, std::span<const double> coords,
                                                std::span<const LocalIndex> triangles,
                                                std::span<const TriangleSprings> springs, bool angular)
    : EdgeFormulation(coords), name_(std::move(name)) {
  check_triangles(coords.size(), triangles, "make_triangle_springs");
  const std::int64_t nt = static_cast<std::int64_t>(triangles.size() / 3);
  if (static_cast<std::int64_t>(springs.size()) != nt)
    throw std::invalid_argument("make_triangle_springs: " + std::to_string(springs.size()) + " spring sets for " +
                                std::to_string(nt) + " triangles");
  const TriangleEdges te = build_triangle_edges(triangles);
  edges_ = edge_assembly::EdgeBlocks(n_vertices_, te.edges);
  n_edges_ = edges_.n_edges();
  rest_.resize(n_edges_);
  for (std::int64_t e = 0; e < n_edges_; ++e) {
    double p[3];
    edges_.edge_vector(e, coords.data(), p);  // as elongations() forms it: phi = 0 at rest
    const double q = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
    rest_[e] = kSq ? q : std::sqrt(q);
  }
  // Per-triangle loop: tensile constants accumulated on the edges (triangle order: deterministic).
  const double scale = kSq ? 0.5 : 1.0;  // internal a, b = tensile/2, angular/2 (trbs) or tensile, angular
  a_.assign(n_edges_, 0.0);
  for (std::int64_t t = 0; t < nt; ++t)
    for (int m = 0; m < 3; ++m) a_[te.triangle_edges[3 * t + m]] += scale * springs[t].tensile[m];
  for (std::int64_t t = 0; t < nt; ++t) {
    const double z = springs[t].damping;
    if (!(z >= 0.0) || !std::isfinite(z))
      throw std::invalid_argument("make_triangle_springs: triangle " + std::to_string(t) +
                                  ": damping must be >= 0 and finite, got " + std::to_string(z));
    if (z > 0.0) damped_ = true;
  }
  // Viscous constants: the trbs rule D2^D = D2 + zeta (v_j - v_k).(x_j - x_k) = D2 + zeta/2 dD2/dt, trqs
  // dl^D = dl + zeta ddl/dt: c zeta_T times triangle T's own constants.
  const double cvisc = kSq ? 0.5 : 1.0;
  if (damped_) {
    av_.assign(n_edges_, 0.0);
    for (std::int64_t t = 0; t < nt; ++t)
      for (int m = 0; m < 3; ++m)
        av_[te.triangle_edges[3 * t + m]] += cvisc * springs[t].damping * (scale * springs[t].tensile[m]);
  }
  if (angular) {
    // Both lists are emitted in the same (triangle, edge) order, so ang_v_[k] belongs to ang_.codes[k].
    auto emit = [&](auto&& sink) {
      for (std::int64_t t = 0; t < nt; ++t)
        for (int m = 0; m < 3; ++m) {
          int iu = (m + 1) % 3, iw = (m + 2) % 3;  // local vertices of edge m
          if (triangles[3 * t + iu] > triangles[3 * t + iw]) std::swap(iu, iw);
          const auto& sp = springs[t].angular;
          // edge (w, k) is opposite u, edge (k, u) is opposite w
          sink(te.triangle_edges[3 * t + m],
               AngEntry{triangles[3 * t + m], te.triangle_edges[3 * t + iu], te.triangle_edges[3 * t + iw],
                        scale * sp[m], scale * sp[iu], scale * sp[iw]},
               cvisc * springs[t].damping);
        }
    };
    ang_ = edge_assembly::build_csr<AngEntry>(n_edges_, [&](auto&& sink) {
      emit([&](std::int64_t e, const AngEntry& en, double) { sink(e, en); });
    });
    if (damped_) {
      const auto vis = edge_assembly::build_csr<std::array<double, 3>>(n_edges_, [&](auto&& sink) {
        emit([&](std::int64_t e, const AngEntry& en, double cz) {
          sink(e, std::array<double, 3>{cz * en.bk, cz * en.bu, cz * en.bw});
        });
      });
      ang_v_ = vis.codes;
    }
  } else {
    ang_.ptr.assign(static_cast<std::size_t>(n_edges_) + 1, 0);
  }
  phi_.resize(n_edges_);
  if (!kSq) inv_len_.resize(n_edges_);
  s_.resize(n_edges_);
  if (damped_) rate_.resize(n_edges_);
}

template <SpringStrain kStrain>
void TriangleSpringForm<kStrain>::check_x(std::span<const double> x) const {
  if (x.size() != 3 * static_cast<std::size_t>(n_vertices_))
    throw std::invalid_argument(name_ + ": x holds " + std::to_string(x.size()) + " values, expected " +
                                std::to_string(3 * static_cast<std::size_t>(n_vertices_)));
}

template <SpringStrain kStrain>
void TriangleSpringForm<kStrain>::elongations(const double* x) const {
  const std::int64_t ne = n_edges_;
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < ne; ++e) {
    double p[3];
    edges_.edge_vector(e, x, p);
    const double q = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
    if constexpr (kSq) {
      phi_[e] = q - rest_[e];
    } else {
      const double l = std::sqrt(q);
      inv_len_[e] = 1.0 / l;
      phi_[e] = l - rest_[e];
    }
  }
}

template <SpringStrain kStrain>
void TriangleSpringForm<kStrain>::rates(const double* x, const double* v) const {
  const std::int64_t ne = n_edges_;
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < ne; ++e) {
    double p[3], dv[3];
    edges_.edge_vector(e, x, p);
    edges_.edge_vector(e, v, dv);
    const double pv = p[0] * dv[0] + p[1] * dv[1] + p[2] * dv[2];
    if constexpr (kSq) {
      rate_[e] = 2.0 * pv;  // d(|p|^2 - L^2)/dt
    } else {
      const double il = 1.0 / std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
      inv_len_[e] = il;
      rate_[e] = pv * il;  // d|p|/dt
    }
  }
}

template <SpringStrain kStrain>
template <bool kVisc>
void TriangleSpringForm<kStrain>::edge_terms(const double* x, double* kedge) const {
  const std::int64_t ne = n_edges_;
  const double* phi = kVisc ? rate_.data() : phi_.data();
  const double* acoef = kVisc ? av_.data() : a_.data();
  // Angular pair constants of entry k: (bk, bu, bw), elastic or viscous.
  auto bconst = [&](std::int64_t k) -> std::array<double, 3> {
    if constexpr (kVisc) {
      return ang_v_[k];
    } else {
      const AngEntry& en = ang_.codes[k];
      return {en.bk, en.bu, en.bw};
    }
  };
#pragma omp parallel for schedule(static)
  for (std::int64_t e = 0; e < ne; ++e) {
    const std::int64_t k0 = ang_.ptr[e], k1 = ang_.ptr[e + 1];
    double s = acoef[e] * phi[e];
    for (std::int64_t k = k0; k < k1; ++k) {
      const AngEntry& en = ang_.codes[k];
      const auto b = bconst(k);
      s += b[1] * phi[en.e2] + b[2] * phi[en.e1];
    }
    s_[e] = s;
    if (!kedge) continue;
    const double* xu = x + 3 * std::int64_t{edges_.v0(e)};
    const double* xw = x + 3 * std::int64_t{edges_.v1(e)};
    double g0[3] = {xu[0] - xw[0], xu[1] - xw[1], xu[2] - xw[2]};  // gamma_E
    double K[9];
    if constexpr (kSq) {
      for (double& c : g0) c *= 2.0;
      const double a = acoef[e];
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) K[3 * r + c] = -a * g0[r] * g0[c];
      if constexpr (!kVisc) {
        K[0] -= 2.0 * s;
        K[4] -= 2.0 * s;
        K[8] -= 2.0 * s;
      }
    } else {
      const double il = inv_len_[e];
      for (double& c : g0) c *= il;
      if constexpr (kVisc) {  // -a n n^T
        const double a = acoef[e];
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) K[3 * r + c] = -a * g0[r] * g0[c];
      } else {
        const double a = acoef[e], sl = s * il;  // -(a n n^T + s/l (I - n n^T))
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) K[3 * r + c] = (sl - a) * g0[r] * g0[c];
        K[0] -= sl;
        K[4] -= sl;
        K[8] -= sl;
      }
    }
    for (std::int64_t k = k0; k < k1; ++k) {
      const AngEntry& en = ang_.codes[k];
      const double* xk = x + 3 * std::int64_t{en.k};
      double g1[3] = {xw[0] - xk[0], xw[1] - xk[1], xw[2] - xk[2]};
      double g2[3] = {xk[0] - xu[0], xk[1] - xu[1], xk[2] - xu[2]};
      if constexpr (kSq) {
        for (int c = 0; c < 3; ++c) g1[c] *= 2.0, g2[c] *= 2.0;
      } else {
        const double i1 = inv_len_[en.e1], i2 = inv_len_[en.e2];
        for (int c = 0; c < 3; ++c) g1[c] *= i1, g2[c] *= i2;
      }
      const auto b = bconst(k);  // bk, bu, bw
      const double q1[3] = {b[2] * g1[0], b[2] * g1[1], b[2] * g1[2]};
      const double q2[3] = {b[1] * g0[0] - b[0] * g1[0], b[1] * g0[1] - b[0] * g1[1], b[1] * g0[2] - b[0] * g1[2]};
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) K[3 * r + c] += g0[r] * q1[c] + g2[r] * q2[c];
    }
    edge_assembly::write_edge_block(kedge, e, K);
  }
}

template <SpringStrain kStrain>
void TriangleSpringForm<kStrain>::vertex_terms(const double* x, double* f, double* blocks, const double* kedge) const {
  const std::int64_t nv = n_vertices_;
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < nv; ++v) {
    double fv[3] = {0.0, 0.0, 0.0};
    // K(v, v): -sum of non-symmetric edge blocks, symmetric up to round-off; made exactly symmetric (K = K^T).
    edges_.gather_vertex<edge_assembly::Diagonal::symmetrised>(static_cast<LocalIndex>(v), kedge, blocks,
                                                               [&](std::int64_t e, bool is_v1) EDGEFEM_INLINE {
                                                                 double p[3];
                                                                 edges_.edge_vector(e, x, p);
                                                                 double c = is_v1 ? -s_[e] : s_[e];
                                                                 if constexpr (kSq)
                                                                   c *= 2.0;
                                                                 else
                                                                   c *= inv_len_[e];
                                                                 fv[0] += c * p[0];
                                                                 fv[1] += c * p[1];
                                                                 fv[2] += c * p[2];
                                                               });
    f[3 * v] = fv[0];
    f[3 * v + 1] = fv[1];
    f[3 * v + 2] = fv[2];
  }
}

template <SpringStrain kStrain>
double TriangleSpringForm<kStrain>::energy(std::span<const double> x) const {
  check_x(x);
  elongations(x.data());
  edge_terms<false>(x.data(), nullptr);
  return 0.5 * edge_assembly::ordered_sum(n_edges_, [&](std::int64_t e) { return phi_[e] * s_[e]; });
}

template <SpringStrain kStrain>
void TriangleSpringForm<kStrain>::force(std::span<const double> x, std::span<double> f) const {
  check_x(x);
  if (f.size() != x.size()) throw std::invalid_argument(name_ + ": f has the wrong size");
  elongations(x.data());
  edge_terms<false>(x.data(), nullptr);
  vertex_terms(x.data(), f.data(), nullptr, nullptr);
}

template <SpringStrain kStrain>
void TriangleSpringForm<kStrain>::force_and_stiffness(std::span<const double> x, std::span<double> f,
                                                      std::span<double> blocks) const {
  check_x(x);
  if (f.size() != x.size()) throw std::invalid_argument(name_ + ": f has the wrong size");
  edges_.check_blocks(blocks, name_);
  double* kedge = edges_.edge_blocks(blocks.data());  // K(E) at 18 e, K(E)^T at 18 e + 9
  elongations(x.data());
  edge_terms<false>(x.data(), kedge);
  vertex_terms(x.data(), f.data(), blocks.data(), kedge);
}

template <SpringStrain kStrain>
void TriangleSpringForm<kStrain>::viscous_force_and_damping(std::span<const double> x, std::span<const double> v,
                                                            std::span<double> f, std::span<double> blocks) const {
  check_x(x);
  if (v.size() != x.size()) throw std::invalid_argument(name_ + ": v has the wrong size");
  if (f.size() != x.size()) throw std::invalid_argument(name_ + ": f has the wrong size");
  if (!blocks.empty() && blocks.size() != 9 * edges_.pattern().size())
    throw std::invalid_argument(name_ + ": blocks holds " + std::to_string(blocks.size()) + " values, expected 0 or " +
                                std::to_string(9 * edges_.pattern().size()));
  if (!damped_) {
    std::fill(f.begin(), f.end(), 0.0);
    std::fill(blocks.begin(), blocks.end(), 0.0);
    return;
  }
  double* kedge = blocks.empty() ? nullptr : edges_.edge_blocks(blocks.data());
  rates(x.data(), v.data());
  edge_terms<true>(x.data(), kedge);
  vertex_terms(x.data(), f.data(), blocks.empty() ? nullptr : blocks.data(), kedge);
}

std::vector<TriangleSprings> springs_of(std::string_view model, std::span<const double> coords,
                                        std::span<const LocalIndex> triangles,
                                        std::span<const MembraneMaterial> materials,
                                        std::span<const std::int32_t> material_of_triangle) {
  check_triangle_materials(coords.size(), triangles, materials, material_of_triangle, "make_membrane");
  const std::size_t nt = triangles.size() / 3;
  std::vector<TriangleSprings> out(nt);
  for (std::size_t t = 0; t < nt; ++t) {
    double X[9];
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c) X[3 * i + c] = coords[3 * std::size_t(triangles[3 * t + i]) + c];
    const MembraneMaterial& mat = materials[material_of_triangle[t]];
    try {
      out[t] = model == "trbs" ? trbs_springs(X, mat) : trqs_springs(X, mat);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("make_membrane: triangle " + std::to_string(t) + ": " + e.what());
    }
  }
  return out;
}

}  // namespace

std::unique_ptr<TetFormulation> make_linear_membrane(std::span<const double> coords,
                                                     std::span<const LocalIndex> triangles,
                                                     std::span<const MembraneMaterial> materials,
                                                     std::span<const std::int32_t> material_of_triangle) {
  // K0 = the trbs tangent at rest (no out-of-plane stiffness, as a membrane should be).
  return make_constant_stiffness("linear-membrane", coords,
                                 *make_membrane("trbs", coords, triangles, materials, material_of_triangle));
}

std::unique_ptr<TetFormulation> make_triangle_springs(std::string name, SpringStrain strain,
                                                      std::span<const double> coords,
                                                      std::span<const LocalIndex> triangles,
                                                      std::span<const TriangleSprings> springs, bool angular) {
  if (strain == SpringStrain::squared_length)
    return std::make_unique<TriangleSpringForm<SpringStrain::squared_length>>(std::move(name), coords, triangles,
                                                                              springs, angular);
  return std::make_unique<TriangleSpringForm<SpringStrain::length>>(std::move(name), coords, triangles, springs,
                                                                    angular);
}

std::unique_ptr<TetFormulation> make_membrane(std::string_view model, std::span<const double> coords,
                                              std::span<const LocalIndex> triangles,
                                              std::span<const MembraneMaterial> materials,
                                              std::span<const std::int32_t> material_of_triangle) {
  if (model == "linear-membrane") return make_linear_membrane(coords, triangles, materials, material_of_triangle);
  if (model != "trbs" && model != "trqs" && model != "springs")
    throw std::invalid_argument("make_membrane: unknown membrane model '" + std::string(model) +
                                "' (expected trbs, trqs, springs or linear-membrane)");
  const auto springs = springs_of(model == "trbs" ? "trbs" : "trqs", coords, triangles, materials,
                                  material_of_triangle);
  return make_triangle_springs(std::string(model),
                               model == "trbs" ? SpringStrain::squared_length : SpringStrain::length, coords, triangles,
                               springs, model != "springs");
}

}  // namespace edgefem
