// SPDX-License-Identifier: BSD-3-Clause
#include "mesh/vertex_rotations.hpp"

#include <Eigen/Dense>
#include <cstddef>
#include <stdexcept>

namespace edgefem {

std::vector<double> vertex_rotations(std::span<const double> reference, std::span<const double> current,
                                     std::span<const LocalIndex> tets, LocalIndex n_vertices) {
  if (current.size() != reference.size() || tets.size() % 4 != 0 ||
      3 * static_cast<std::size_t>(n_vertices) > reference.size())
    throw std::invalid_argument("vertex_rotations: inconsistent sizes");
  const auto n = static_cast<std::size_t>(n_vertices);
  const double* x = current.data();
  const double* X = reference.data();
  std::vector<double> cov(9 * n, 0.0);
  // The edges of each tet, added to their ends below n (an edge shared by several tets counts once per tet: the
  // weights follow the volume's neighbourhood, which is all the fit needs).
  for (std::size_t t = 0; t < tets.size() / 4; ++t) {
    const LocalIndex* v = tets.data() + 4 * t;
    for (int i = 0; i < 4; ++i)
      for (int j = i + 1; j < 4; ++j) {
        const auto a = static_cast<std::size_t>(v[i]), b = static_cast<std::size_t>(v[j]);
        if (a >= n && b >= n) continue;
        double d[3], D[3];
        for (int k = 0; k < 3; ++k) d[k] = x[3 * a + k] - x[3 * b + k], D[k] = X[3 * a + k] - X[3 * b + k];
        for (const std::size_t w : {a, b}) {
          if (w >= n) continue;
          double* c = cov.data() + 9 * w;
          for (int r = 0; r < 3; ++r)
            for (int k = 0; k < 3; ++k) c[3 * r + k] += d[r] * D[k];
        }
      }
  }
  std::vector<double> rotations(9 * n);
#pragma omp parallel for schedule(static)
  for (std::size_t w = 0; w < n; ++w) {
    using Row3 = Eigen::Matrix<double, 3, 3, Eigen::RowMajor>;
    const Eigen::Map<const Row3> a(cov.data() + 9 * w);
    Eigen::Map<Row3> r(rotations.data() + 9 * w);
    if (a.squaredNorm() == 0.0) {
      r.setIdentity();
      continue;
    }
    const Eigen::JacobiSVD<Eigen::Matrix3d> svd(a, Eigen::ComputeFullU | Eigen::ComputeFullV);
    Eigen::Matrix3d u = svd.matrixU();
    if ((u * svd.matrixV().transpose()).determinant() < 0.0) u.col(2) *= -1.0;  // a proper rotation
    r = u * svd.matrixV().transpose();
  }
  return rotations;
}

}  // namespace edgefem
