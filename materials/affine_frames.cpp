// SPDX-License-Identifier: BSD-3-Clause
/// \file affine_frames.cpp
/// Affine frames: samples, the StVK kernel with its exact derivatives, the sums over samples (affine_frames.hpp).
#include "materials/affine_frames.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>

namespace edgefem::frames {

AffinePoints affine_samples(const FramePoints& s, std::span<const Vec3> rest_origins) {
  AffinePoints out;
  out.point = s.point;
  out.volume = s.volume;
  out.lambda = s.lambda;
  out.mu = s.mu;
  out.offsets = s.offsets;
  out.influences.resize(s.influences.size());
  for (std::size_t k = 0; k < s.size(); ++k)
    for (int q = s.offsets[k]; q < s.offsets[k + 1]; ++q) {
      const Influence& in = s.influences[static_cast<std::size_t>(q)];
      AffineInfluence& a = out.influences[static_cast<std::size_t>(q)];
      a.frame = in.frame;
      const Vec3& rest = rest_origins[static_cast<std::size_t>(in.frame)];
      for (int m = 0; m < 3; ++m)
        for (int b = 0; b < 3; ++b) a.B[m][b] = (m == b ? in.c[0] : 0.0) + (s.point[k][m] - rest[m]) * in.c[1 + b];
      for (int b = 0; b < 3; ++b) a.B[3][b] = in.c[1 + b];
    }
  return out;
}

std::vector<double> affine_rest_state(std::span<const Vec3> rest_origins) {
  std::vector<double> q(kAffineDofs * rest_origins.size(), 0.0);
  for (std::size_t i = 0; i < rest_origins.size(); ++i)
    for (int a = 0; a < 3; ++a) {
      q[kAffineDofs * i + 4 * a + a] = 1.0;
      q[kAffineDofs * i + 4 * a + 3] = rest_origins[i][a];
    }
  return q;
}

std::array<double, 9> affine_deformation_gradient(const AffinePoints& s, std::size_t k, std::span<const double> q) {
  std::array<double, 9> F{};
  for (int p = s.offsets[k]; p < s.offsets[k + 1]; ++p) {
    const AffineInfluence& in = s.influences[static_cast<std::size_t>(p)];
    const double* Q = &q[kAffineDofs * static_cast<std::size_t>(in.frame)];
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b)
        F[3 * a + b] += Q[4 * a] * in.B[0][b] + Q[4 * a + 1] * in.B[1][b] + Q[4 * a + 2] * in.B[2][b] +
                        Q[4 * a + 3] * in.B[3][b];
  }
  return F;
}

namespace {

/// StVK at F: the density, S and P = F S (row-major).
struct StvkState {
  double psi = 0.0;
  double S[3][3]{}, P[3][3]{};
};

StvkState stvk_state(const std::array<double, 9>& F, double lambda, double mu) {
  StvkState st;
  double E[3][3];
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      E[a][b] = 0.5 * (F[a] * F[b] + F[3 + a] * F[3 + b] + F[6 + a] * F[6 + b] - (a == b ? 1.0 : 0.0));
  const double tr = E[0][0] + E[1][1] + E[2][2];
  double ee = 0.0;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      ee += E[a][b] * E[a][b];
      st.S[a][b] = 2.0 * mu * E[a][b] + (a == b ? lambda * tr : 0.0);
    }
  st.psi = 0.5 * lambda * tr * tr + mu * ee;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b)
      st.P[a][b] = F[3 * a] * st.S[0][b] + F[3 * a + 1] * st.S[1][b] + F[3 * a + 2] * st.S[2][b];
  return st;
}

/// Per-influence products of the Hessian: u[a][m] = (B F_a)_m and BS = B S (4x3).
struct InfluenceProducts {
  double u[3][4];
  double BS[4][3];
};

/// The 12x12 Hessian block of influences p and r (frame of p <= frame of r) added at its place in `hessian`.
void add_block(const AffineInfluence& p, const AffineInfluence& r, const InfluenceProducts& up,
               const InfluenceProducts& ur, const double FFt[3][3], double lambda, double mu, double V, double* hessian,
               std::size_t n_dofs) {
  double M1[4][4], M0[4][4];
  for (int m = 0; m < 4; ++m)
    for (int n = 0; n < 4; ++n) {
      M1[m][n] = up.BS[m][0] * r.B[n][0] + up.BS[m][1] * r.B[n][1] + up.BS[m][2] * r.B[n][2];
      M0[m][n] = p.B[m][0] * r.B[n][0] + p.B[m][1] * r.B[n][1] + p.B[m][2] * r.B[n][2];
    }
  const std::size_t row0 = kAffineDofs * static_cast<std::size_t>(p.frame);
  const std::size_t col0 = kAffineDofs * static_cast<std::size_t>(r.frame);
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) {
      const double g = mu * FFt[a][c];
      for (int m = 0; m < 4; ++m) {
        double* h = hessian + (row0 + 4 * a + m) * n_dofs + col0 + 4 * c;
        const double la = lambda * up.u[a][m], mc = mu * up.u[c][m];
        for (int n = 0; n < 4; ++n) {
          double v = g * M0[m][n] + la * ur.u[c][n] + mc * ur.u[a][n];
          if (a == c) v += M1[m][n];
          h[n] += V * v;
        }
      }
    }
}

void add_hessian(const AffineInfluence* in, int n_in, const std::array<double, 9>& F, const StvkState& st,
                 double lambda, double mu, double V, double* hessian, std::size_t n_dofs) {
  thread_local std::vector<InfluenceProducts> products;
  products.resize(static_cast<std::size_t>(n_in));
  double FFt[3][3];
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c)
      FFt[a][c] = F[3 * a] * F[3 * c] + F[3 * a + 1] * F[3 * c + 1] + F[3 * a + 2] * F[3 * c + 2];
  for (int i = 0; i < n_in; ++i) {
    InfluenceProducts& pr = products[static_cast<std::size_t>(i)];
    for (int m = 0; m < 4; ++m) {
      for (int a = 0; a < 3; ++a)
        pr.u[a][m] = in[i].B[m][0] * F[3 * a] + in[i].B[m][1] * F[3 * a + 1] + in[i].B[m][2] * F[3 * a + 2];
      for (int d = 0; d < 3; ++d)
        pr.BS[m][d] = in[i].B[m][0] * st.S[0][d] + in[i].B[m][1] * st.S[1][d] + in[i].B[m][2] * st.S[2][d];
    }
  }
  for (int i = 0; i < n_in; ++i)
    for (int j = i; j < n_in; ++j) {
      const bool in_order = in[i].frame <= in[j].frame;
      const int p = in_order ? i : j, r = in_order ? j : i;
      add_block(in[p], in[r], products[static_cast<std::size_t>(p)], products[static_cast<std::size_t>(r)], FFt, lambda,
                mu, V, hessian, n_dofs);
    }
}

}  // namespace

double add_affine_sample(const AffinePoints& s, std::size_t k, std::span<const double> q, double* gradient,
                         double* hessian, std::size_t n_dofs) {
  const std::array<double, 9> F = affine_deformation_gradient(s, k, q);
  const StvkState st = stvk_state(F, s.lambda[k], s.mu[k]);
  const double V = s.volume[k];
  const AffineInfluence* in = s.influences.data() + s.offsets[k];
  const int n_in = s.offsets[k + 1] - s.offsets[k];
  if (gradient)
    for (int i = 0; i < n_in; ++i) {
      double* g = gradient + kAffineDofs * static_cast<std::size_t>(in[i].frame);
      for (int a = 0; a < 3; ++a)
        for (int m = 0; m < 4; ++m)
          g[4 * a + m] += V * (st.P[a][0] * in[i].B[m][0] + st.P[a][1] * in[i].B[m][1] + st.P[a][2] * in[i].B[m][2]);
    }
  if (hessian) add_hessian(in, n_in, F, st, s.lambda[k], s.mu[k], V, hessian, n_dofs);
  return V * st.psi;
}

void mirror_upper(std::vector<double>& h, std::size_t n) {
  for (std::size_t r = 1; r < n; ++r)
    for (std::size_t c = 0; c < r; ++c) h[r * n + c] = h[c * n + r];
}

namespace {

/// Work of the load points, -sum f . x, and its (constant) gradient added to `gradient` (may be null).
double add_loads(const FramePoints& loads, std::span<const Vec3> rest_origins, std::span<const double> q,
                 double* gradient) {
  double energy = 0.0;
  for (std::size_t k = 0; k < loads.size(); ++k) {
    const Vec3& X = loads.point[k];
    const Vec3& f = loads.force[k];
    for (int p = loads.offsets[k]; p < loads.offsets[k + 1]; ++p) {
      const Influence& in = loads.influences[static_cast<std::size_t>(p)];
      const Vec3& rest = rest_origins[static_cast<std::size_t>(in.frame)];
      const double* Q = &q[kAffineDofs * static_cast<std::size_t>(in.frame)];
      const double r[4] = {X[0] - rest[0], X[1] - rest[1], X[2] - rest[2], 1.0};
      for (int a = 0; a < 3; ++a) {
        const double x = Q[4 * a] * r[0] + Q[4 * a + 1] * r[1] + Q[4 * a + 2] * r[2] + Q[4 * a + 3];
        energy -= in.c[0] * f[a] * x;
        if (gradient)
          for (int m = 0; m < 4; ++m)
            gradient[kAffineDofs * static_cast<std::size_t>(in.frame) + 4 * a + m] -= in.c[0] * f[a] * r[m];
      }
    }
  }
  return energy;
}

/// Fixed chunks of samples (independent of the thread count), at most 16, fewer when the Hessians are large.
std::size_t chunk_count(std::size_t n_samples, std::size_t hessian_size) {
  const std::size_t max_chunks = std::max<std::size_t>(1, (std::size_t{256} << 20) /
                                                              std::max<std::size_t>(1, hessian_size * sizeof(double)));
  return std::max<std::size_t>(1, std::min<std::size_t>({16, max_chunks, n_samples}));
}

}  // namespace

void evaluate_affine(const AffinePoints& samples, const FramePoints& loads, std::span<const Vec3> rest_origins,
                     std::span<const double> q, bool want_hessian, FrameSystem& out) {
  const std::size_t n_dofs = q.size(), n_samples = samples.size();
  const std::size_t h_size = want_hessian ? n_dofs * n_dofs : 0;
  const std::size_t n_chunks = chunk_count(n_samples, h_size);
  std::vector<double> energy(n_chunks, 0.0);
  std::vector<std::vector<double>> g(n_chunks), h(n_chunks);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t c = 0; c < n_chunks; ++c) {
    g[c].assign(n_dofs, 0.0);
    h[c].assign(h_size, 0.0);
    const std::size_t begin = n_samples * c / n_chunks, end = n_samples * (c + 1) / n_chunks;
    for (std::size_t k = begin; k < end; ++k)
      energy[c] += add_affine_sample(samples, k, q, g[c].data(), want_hessian ? h[c].data() : nullptr, n_dofs);
  }
  out.gradient = std::move(g[0]);
  out.hessian = std::move(h[0]);
  out.strain_energy = energy[0];
  for (std::size_t c = 1; c < n_chunks; ++c) {
    out.strain_energy += energy[c];
    for (std::size_t i = 0; i < n_dofs; ++i) out.gradient[i] += g[c][i];
    for (std::size_t i = 0; i < h_size; ++i) out.hessian[i] += h[c][i];
  }
  if (want_hessian) mirror_upper(out.hessian, n_dofs);
  out.energy = out.strain_energy + add_loads(loads, rest_origins, q, out.gradient.data());
}

double affine_energy(const AffinePoints& samples, const FramePoints& loads, std::span<const Vec3> rest_origins,
                     std::span<const double> q) {
  const std::size_t n_samples = samples.size();
  const std::size_t n_chunks = chunk_count(n_samples, 0);
  std::vector<double> energy(n_chunks, 0.0);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t c = 0; c < n_chunks; ++c) {
    const std::size_t begin = n_samples * c / n_chunks, end = n_samples * (c + 1) / n_chunks;
    for (std::size_t k = begin; k < end; ++k) {
      const std::array<double, 9> F = affine_deformation_gradient(samples, k, q);
      energy[c] += samples.volume[k] * stvk_density(F, samples.lambda[k], samples.mu[k]);
    }
  }
  double e = 0.0;
  for (const double v : energy) e += v;
  return e + add_loads(loads, rest_origins, q, nullptr);
}

std::vector<double> affine_skin(std::span<const double> reference, std::span<const double> weights,
                                std::span<const Vec3> rest_origins, std::span<const double> q) {
  const std::size_t n = rest_origins.size(), n_points = reference.size() / 3;
  std::vector<double> x(reference.size(), 0.0);
#pragma omp parallel for schedule(static)
  for (std::size_t v = 0; v < n_points; ++v)
    for (std::size_t i = 0; i < n; ++i) {
      const double w = weights[v * n + i];
      if (w == 0.0) continue;
      const double* Q = &q[kAffineDofs * i];
      const double r[3] = {reference[3 * v] - rest_origins[i][0], reference[3 * v + 1] - rest_origins[i][1],
                           reference[3 * v + 2] - rest_origins[i][2]};
      for (int a = 0; a < 3; ++a)
        x[3 * v + a] += w * (Q[4 * a] * r[0] + Q[4 * a + 1] * r[1] + Q[4 * a + 2] * r[2] + Q[4 * a + 3]);
    }
  return x;
}

void add_affine_voxel_sums(const FramePoints& s, std::span<const Vec3> rest_origins, const Vec3& lo, const Vec3& hi,
                           const std::array<int, 3>& n, std::span<double> sums) {
  const std::size_t width = kVoxelFields + kAffineDofs * rest_origins.size();
  for (std::size_t k = 0; k < s.size(); ++k) {
    double* v = &sums[voxel_of(s.point[k], lo, hi, n) * width];
    const double V = s.volume[k];
    v[0] += V;
    for (int d = 0; d < 3; ++d) v[1 + d] += V * s.point[k][d];
    v[4] += V * s.lambda[k];
    v[5] += V * s.mu[k];
    for (int p = s.offsets[k]; p < s.offsets[k + 1]; ++p) {
      const Influence& in = s.influences[static_cast<std::size_t>(p)];
      const Vec3& rest = rest_origins[static_cast<std::size_t>(in.frame)];
      double* b = v + kVoxelFields + kAffineDofs * in.frame;  // B[m][d] at 3 m + d (affine_samples)
      for (int m = 0; m < 3; ++m)
        for (int d = 0; d < 3; ++d)
          b[3 * m + d] += V * ((m == d ? in.c[0] : 0.0) + (s.point[k][m] - rest[m]) * in.c[1 + d]);
      for (int d = 0; d < 3; ++d) b[9 + d] += V * in.c[1 + d];
    }
  }
}

AffinePoints affine_voxel_samples(std::span<const double> sums, const std::array<int, 3>& n, int n_frames, int first,
                                  int stride) {
  const std::size_t width = kVoxelFields + kAffineDofs * static_cast<std::size_t>(n_frames);
  return voxel_sample_points<AffinePoints>(sums, n, width, first, stride,
                                           [n_frames](AffinePoints& out, const double* v, double V) {
    for (int f = 0; f < n_frames; ++f) {
      const double* b = v + kVoxelFields + kAffineDofs * f;
      if (std::all_of(b, b + kAffineDofs, [](double x) { return x == 0.0; })) continue;
      AffineInfluence in;
      in.frame = f;
      for (int m = 0; m < 4; ++m)
        for (int d = 0; d < 3; ++d) in.B[m][d] = b[3 * m + d] / V;
      out.influences.push_back(in);
    }
  });
}

}  // namespace edgefem::frames
