// SPDX-License-Identifier: BSD-3-Clause
/// \file pbd_chebyshev.cpp
/// Chebyshev acceleration of the position-based sweeps (pbd_chebyshev.hpp).
#include "pbd/pbd_chebyshev.hpp"

#include <algorithm>

namespace edgefem {

ChebyshevAcceleration::ChebyshevAcceleration(const PbdConstraints& sweep, double rho)
    : rho_(rho), x_prev_(sweep.create_vector()), x_prev2_(sweep.create_vector()) {}

void ChebyshevAcceleration::start(Vec x, std::span<const double> shares) {
  k_ = 0;
  omega_ = 1.0;
  EDGEFEM_PETSC(VecCopy(x, x_prev_));
  EDGEFEM_PETSC(VecCopy(x, x_prev2_));
  s_prev_.assign(shares.begin(), shares.end());
  s_prev2_ = s_prev_;
}

void ChebyshevAcceleration::combine(Vec x, std::span<double> shares) {
  // omega of this sweep (Wang 2015, Algorithm 1, without under-relaxation and with the first sweep plain).
  omega_ = k_ == 0 ? 1.0 : k_ == 1 ? 2.0 / (2.0 - rho_ * rho_) : 4.0 / (4.0 - rho_ * rho_ * omega_);
  ++k_;
  // y = omega (y^ - y_{k-1}) + y_{k-1} = a y^ + c y_{k-1}.
  const double a = omega_, c = 1.0 - omega_;
  {
    VecArray xs(x, false), p(x_prev_, false), q(x_prev2_, false);
    for (std::size_t i = 0; i < xs.span().size(); ++i) {
      const double next = a * xs.span()[i] + c * q.span()[i];
      q.span()[i] = p.span()[i];
      p.span()[i] = next;
      xs.span()[i] = next;
    }
  }
  EDGEFEM_PETSC(VecGhostUpdateBegin(x, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(x, INSERT_VALUES, SCATTER_FORWARD));
  for (std::size_t i = 0; i < shares.size(); ++i) {
    const double next = a * shares[i] + c * s_prev2_[i];
    s_prev2_[i] = s_prev_[i];
    s_prev_[i] = next;
    shares[i] = next;
  }
}

}  // namespace edgefem
