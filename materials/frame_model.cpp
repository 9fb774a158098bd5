// SPDX-License-Identifier: BSD-3-Clause
/// \file frame_model.cpp
/// Sample set-up and the sum over samples of the frame model (frame_model.hpp).
///
/// Chain rule: a sample's energy depends on the frames only through z = (b, W), b = sum_i c_i0 d_i and
/// W[:, c] = sum_i c_i,1+c d_i, so with g_z, H_z from stvk_sample:
///   g_d(i) = sum_a c_ia g_z[a-block],  H_d(i, j) = sum_ab c_ia c_jb H_z[a-block][b-block]   (8 and 8x8 blocks),
/// summed over samples per frame (pair), and then once per frame (pair) with d_i(twist) (relative_transform):
///   g(i) = D_i^T g_d(i),  K(i, j) = D_i^T H_d(i, j) D_j + delta_ij sum_k g_d(i)_k d^2 d_ik / dtwist^2.
#include "materials/frame_model.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace edgefem::frames {

FramePoints make_samples(const Mesh& mesh, std::span<const LocalIndex> cells, std::span<const double> cell_lambda,
                         std::span<const double> cell_mu, std::span<const double> weights, int n_frames) {
  FramePoints s;
  for (std::size_t k = 0; k < cells.size(); ++k) {
    const LocalIndex t = cells[k];
    const LocalIndex* v = &mesh.tets[4 * static_cast<std::size_t>(t)];
    const double* X[4];
    for (int i = 0; i < 4; ++i) X[i] = &mesh.coords[3 * static_cast<std::size_t>(v[i])];
    // P1 gradients: rows of D^-1, D = [X1 - X0, X2 - X0, X3 - X0] (columns).
    double d[3][3];
    for (int i = 0; i < 3; ++i)
      for (int c = 0; c < 3; ++c) d[i][c] = X[i + 1][c] - X[0][c];
    const double det = d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) -
                       d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
                       d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
    if (det == 0.0) throw std::invalid_argument("frame samples: tetrahedron with zero volume");
    double alpha[4][3];
    auto cross = [](const double* a, const double* b, double* c) {
      c[0] = a[1] * b[2] - a[2] * b[1];
      c[1] = a[2] * b[0] - a[0] * b[2];
      c[2] = a[0] * b[1] - a[1] * b[0];
    };
    cross(d[1], d[2], alpha[1]);
    cross(d[2], d[0], alpha[2]);
    cross(d[0], d[1], alpha[3]);
    for (int i = 1; i < 4; ++i)
      for (int c = 0; c < 3; ++c) alpha[i][c] /= det;
    for (int c = 0; c < 3; ++c) alpha[0][c] = -(alpha[1][c] + alpha[2][c] + alpha[3][c]);
    Vec3 centroid{};
    for (int i = 0; i < 4; ++i)
      for (int c = 0; c < 3; ++c) centroid[c] += 0.25 * X[i][c];
    s.point.push_back(centroid);
    s.volume.push_back(std::abs(det) / 6.0);
    s.lambda.push_back(cell_lambda[k]);
    s.mu.push_back(cell_mu[k]);
    for (int f = 0; f < n_frames; ++f) {
      Influence in;
      in.frame = f;
      for (int i = 0; i < 4; ++i) {
        const double w = weights[static_cast<std::size_t>(v[i]) * n_frames + f];
        in.c[0] += 0.25 * w;
        for (int c = 0; c < 3; ++c) in.c[1 + c] += w * alpha[i][c];
      }
      if (in.c[0] != 0.0 || in.c[1] != 0.0 || in.c[2] != 0.0 || in.c[3] != 0.0) s.influences.push_back(in);
    }
    s.offsets.push_back(static_cast<int>(s.influences.size()));
  }
  return s;
}

std::size_t voxel_of(const Vec3& point, const Vec3& lo, const Vec3& hi, const std::array<int, 3>& n) {
  std::size_t index = 0;
  for (int d = 2; d >= 0; --d) {  // x fastest
    const double extent = hi[d] - lo[d];
    int i = extent > 0.0 ? static_cast<int>(std::floor((point[d] - lo[d]) / extent * n[d])) : 0;
    i = std::clamp(i, 0, n[d] - 1);
    index = index * static_cast<std::size_t>(n[d]) + static_cast<std::size_t>(i);
  }
  return index;
}

void add_voxel_sums(const FramePoints& s, const Vec3& lo, const Vec3& hi, const std::array<int, 3>& n, int n_frames,
                    std::span<double> sums) {
  const std::size_t width = kVoxelFields + 4 * static_cast<std::size_t>(n_frames);
  for (std::size_t k = 0; k < s.size(); ++k) {
    double* v = &sums[voxel_of(s.point[k], lo, hi, n) * width];
    const double V = s.volume[k];
    v[0] += V;
    for (int d = 0; d < 3; ++d) v[1 + d] += V * s.point[k][d];
    v[4] += V * s.lambda[k];
    v[5] += V * s.mu[k];
    for (int q = s.offsets[k]; q < s.offsets[k + 1]; ++q) {
      const Influence& in = s.influences[static_cast<std::size_t>(q)];
      for (int a = 0; a < 4; ++a) v[kVoxelFields + 4 * in.frame + a] += V * in.c[a];
    }
  }
}

FramePoints voxel_samples(std::span<const double> sums, const std::array<int, 3>& n, int n_frames, int first,
                          int stride) {
  const std::size_t width = kVoxelFields + 4 * static_cast<std::size_t>(n_frames);
  return voxel_sample_points<FramePoints>(sums, n, width, first, stride,
                                          [n_frames](FramePoints& out, const double* v, double V) {
    for (int f = 0; f < n_frames; ++f) {
      Influence in;
      in.frame = f;
      for (int a = 0; a < 4; ++a) in.c[a] = v[kVoxelFields + 4 * f + a] / V;
      if (in.c[0] != 0.0 || in.c[1] != 0.0 || in.c[2] != 0.0 || in.c[3] != 0.0) out.influences.push_back(in);
    }
  });
}

namespace {

/// Per-frame blend accumulators in dual-quaternion space.
struct DualSums {
  int n = 0;
  double energy = 0.0, strain_energy = 0.0;
  std::vector<double> g;  ///< 8 n
  std::vector<double> h;  ///< (8 n)^2, row-major
  void reset(int n_frames, bool hessian) {
    n = n_frames;
    energy = strain_energy = 0.0;
    g.assign(8 * static_cast<std::size_t>(n), 0.0);
    h.assign(hessian ? 64 * static_cast<std::size_t>(n) * n : 0, 0.0);
  }
};

void add_sample(const FramePoints& s, std::size_t k, std::span<const RelativeTransform> rel, bool hessian,
                DualSums& acc) {
  const Influence* in = s.influences.data() + s.offsets[k];
  const int n_in = s.offsets[k + 1] - s.offsets[k];
  DualQuat b{};
  double W[8][3] = {};
  for (int q = 0; q < n_in; ++q) {
    const DualQuat& d = rel[static_cast<std::size_t>(in[q].frame)].d;
    for (int l = 0; l < 8; ++l) {
      b[l] += in[q].c[0] * d[l];
      for (int c = 0; c < 3; ++c) W[l][c] += in[q].c[1 + c] * d[l];
    }
  }
  SampleEnergy e;
  stvk_sample(b, W, s.point[k], s.lambda[k], s.mu[k], s.volume[k], e);
  acc.energy += e.energy;
  acc.strain_energy += e.energy;
  const std::size_t n8 = 8 * static_cast<std::size_t>(acc.n);
  for (int q = 0; q < n_in; ++q) {
    double* g = &acc.g[8 * static_cast<std::size_t>(in[q].frame)];
    for (int a = 0; a < 4; ++a)
      for (int l = 0; l < 8; ++l) g[l] += in[q].c[a] * e.grad[8 * a + l];
  }
  if (!hessian) return;
  // Y_q[l][z] = sum_a c_qa H_z[8a + l][z], then H_d(q, r)[l][m] += sum_b c_rb Y_q[l][8b + m].
  double Y[8][kSampleVars];
  for (int q = 0; q < n_in; ++q) {
    for (int l = 0; l < 8; ++l)
      for (int z = 0; z < kSampleVars; ++z) {
        double v = 0.0;
        for (int a = 0; a < 4; ++a) v += in[q].c[a] * e.hess[8 * a + l][z];
        Y[l][z] = v;
      }
    const std::size_t row0 = 8 * static_cast<std::size_t>(in[q].frame);
    for (int r = 0; r < n_in; ++r) {
      const std::size_t col0 = 8 * static_cast<std::size_t>(in[r].frame);
      for (int l = 0; l < 8; ++l) {
        double* h = &acc.h[(row0 + l) * n8 + col0];
        for (int m = 0; m < 8; ++m) {
          double v = 0.0;
          for (int bb = 0; bb < 4; ++bb) v += in[r].c[bb] * Y[l][8 * bb + m];
          h[m] += v;
        }
      }
    }
  }
}

void add_load(const FramePoints& s, std::size_t k, std::span<const RelativeTransform> rel, bool hessian,
              DualSums& acc) {
  const Influence* in = s.influences.data() + s.offsets[k];
  const int n_in = s.offsets[k + 1] - s.offsets[k];
  DualQuat b{};
  for (int q = 0; q < n_in; ++q)
    for (int l = 0; l < 8; ++l) b[l] += in[q].c[0] * rel[static_cast<std::size_t>(in[q].frame)].d[l];
  const SkinnedPoint sp = skin_derivatives(b, s.point[k]);
  const Vec3& f = s.force[k];
  acc.energy -= f[0] * sp.p[0] + f[1] * sp.p[1] + f[2] * sp.p[2];
  double gb[8], hb[8][8];
  for (int l = 0; l < 8; ++l) {
    gb[l] = -(f[0] * sp.grad[0][l] + f[1] * sp.grad[1][l] + f[2] * sp.grad[2][l]);
    for (int m = 0; m < 8; ++m)
      hb[l][m] = -(f[0] * sp.hess[0][l][m] + f[1] * sp.hess[1][l][m] + f[2] * sp.hess[2][l][m]);
  }
  const std::size_t n8 = 8 * static_cast<std::size_t>(acc.n);
  for (int q = 0; q < n_in; ++q) {
    double* g = &acc.g[8 * static_cast<std::size_t>(in[q].frame)];
    for (int l = 0; l < 8; ++l) g[l] += in[q].c[0] * gb[l];
    if (!hessian) continue;
    for (int r = 0; r < n_in; ++r) {
      const double cc = in[q].c[0] * in[r].c[0];
      for (int l = 0; l < 8; ++l)
        for (int m = 0; m < 8; ++m)
          acc.h[(8 * static_cast<std::size_t>(in[q].frame) + l) * n8 + 8 * static_cast<std::size_t>(in[r].frame) + m] +=
              cc * hb[l][m];
    }
  }
}

}  // namespace

void evaluate_frames(const FramePoints& samples, const FramePoints& loads, std::span<const Vec3> rest_origins,
                     std::span<const FramePose> poses, bool want_hessian, FrameSystem& out) {
  const int n = static_cast<int>(poses.size());
  std::vector<RelativeTransform> rel(poses.size());
  for (std::size_t i = 0; i < poses.size(); ++i) rel[i] = relative_transform(poses[i], rest_origins[i]);

  // Fixed chunks (independent of the thread count), summed in chunk order.
  const std::size_t n_samples = samples.size();
  const std::size_t per_chunk_bytes = 64 * static_cast<std::size_t>(n) * n * sizeof(double);
  const std::size_t max_chunks = std::max<std::size_t>(1, (std::size_t{256} << 20) /
                                                              std::max<std::size_t>(1, per_chunk_bytes));
  const std::size_t n_chunks = std::max<std::size_t>(1, std::min<std::size_t>({16, max_chunks, n_samples}));
  std::vector<DualSums> chunk(n_chunks);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t c = 0; c < n_chunks; ++c) {
    chunk[c].reset(n, want_hessian);
    const std::size_t begin = n_samples * c / n_chunks, end = n_samples * (c + 1) / n_chunks;
    for (std::size_t k = begin; k < end; ++k) add_sample(samples, k, rel, want_hessian, chunk[c]);
  }
  DualSums total = std::move(chunk[0]);
  for (std::size_t c = 1; c < n_chunks; ++c) {
    total.energy += chunk[c].energy;
    total.strain_energy += chunk[c].strain_energy;
    for (std::size_t i = 0; i < total.g.size(); ++i) total.g[i] += chunk[c].g[i];
    for (std::size_t i = 0; i < total.h.size(); ++i) total.h[i] += chunk[c].h[i];
  }
  for (std::size_t k = 0; k < loads.size(); ++k) add_load(loads, k, rel, want_hessian, total);

  // Twist space.
  const std::size_t n6 = 6 * static_cast<std::size_t>(n), n8 = 8 * static_cast<std::size_t>(n);
  out.energy = total.energy;
  out.strain_energy = total.strain_energy;
  out.gradient.assign(n6, 0.0);
  for (int i = 0; i < n; ++i)
    for (int a = 0; a < 6; ++a) {
      double v = 0.0;
      for (int l = 0; l < 8; ++l) v += rel[i].first[l][a] * total.g[8 * i + l];
      out.gradient[6 * i + a] = v;
    }
  if (!want_hessian) {
    out.hessian.clear();
    return;
  }
  out.hessian.assign(n6 * n6, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      // T = H_d(i, j) D_j (8x6), then D_i^T T.
      double T[8][6];
      for (int l = 0; l < 8; ++l)
        for (int b = 0; b < 6; ++b) {
          double v = 0.0;
          for (int m = 0; m < 8; ++m) v += total.h[(8 * i + l) * n8 + 8 * j + m] * rel[j].first[m][b];
          T[l][b] = v;
        }
      for (int a = 0; a < 6; ++a)
        for (int b = 0; b < 6; ++b) {
          double v = 0.0;
          for (int l = 0; l < 8; ++l) v += rel[i].first[l][a] * T[l][b];
          if (i == j)
            for (int l = 0; l < 8; ++l) v += total.g[8 * i + l] * rel[i].second[l][a][b];
          out.hessian[(6 * i + a) * n6 + 6 * j + b] = v;
        }
    }
}

double frames_energy(const FramePoints& samples, const FramePoints& loads, std::span<const Vec3> rest_origins,
                     std::span<const FramePose> poses) {
  std::vector<DualQuat> d(poses.size());
  for (std::size_t i = 0; i < poses.size(); ++i) d[i] = relative_transform(poses[i], rest_origins[i]).d;
  const std::size_t n_samples = samples.size();
  const std::size_t n_chunks = std::max<std::size_t>(1, std::min<std::size_t>(16, n_samples));
  std::vector<double> chunk(n_chunks, 0.0);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t c = 0; c < n_chunks; ++c) {
    const std::size_t begin = n_samples * c / n_chunks, end = n_samples * (c + 1) / n_chunks;
    double e = 0.0;
    for (std::size_t k = begin; k < end; ++k) {
      DualQuat b{};
      double W[8][3] = {};
      for (int q = samples.offsets[k]; q < samples.offsets[k + 1]; ++q) {
        const Influence& in = samples.influences[q];
        for (int l = 0; l < 8; ++l) {
          b[l] += in.c[0] * d[in.frame][l];
          for (int cc = 0; cc < 3; ++cc) W[l][cc] += in.c[1 + cc] * d[in.frame][l];
        }
      }
      e += stvk_sample_energy(b, W, samples.point[k], samples.lambda[k], samples.mu[k], samples.volume[k]);
    }
    chunk[c] = e;
  }
  double energy = 0.0;
  for (const double e : chunk) energy += e;
  for (std::size_t k = 0; k < loads.size(); ++k) {
    DualQuat b{};
    for (int q = loads.offsets[k]; q < loads.offsets[k + 1]; ++q)
      for (int l = 0; l < 8; ++l) b[l] += loads.influences[q].c[0] * d[loads.influences[q].frame][l];
    const Vec3 p = skin(b, loads.point[k]);
    energy -= loads.force[k][0] * p[0] + loads.force[k][1] * p[1] + loads.force[k][2] * p[2];
  }
  return energy;
}

std::vector<double> skin_points(std::span<const double> reference, std::span<const double> weights,
                                std::span<const Vec3> rest_origins, std::span<const FramePose> poses) {
  const std::size_t n = poses.size();
  std::vector<RelativeTransform> rel(n);
  for (std::size_t i = 0; i < n; ++i) rel[i] = relative_transform(poses[i], rest_origins[i]);
  const std::size_t n_points = reference.size() / 3;
  std::vector<double> x(reference.size());
#pragma omp parallel for schedule(static)
  for (std::size_t v = 0; v < n_points; ++v) {
    DualQuat b{};
    for (std::size_t i = 0; i < n; ++i) {
      const double w = weights[v * n + i];
      if (w == 0.0) continue;
      for (int l = 0; l < 8; ++l) b[l] += w * rel[i].d[l];
    }
    const Vec3 p = skin(b, Vec3{reference[3 * v], reference[3 * v + 1], reference[3 * v + 2]});
    for (int c = 0; c < 3; ++c) x[3 * v + c] = p[c];
  }
  return x;
}

}  // namespace edgefem::frames
