// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file pbd_chebyshev.hpp
/// Chebyshev semi-iterative acceleration of the coloured XPBD sweep (Wang 2015, "A Chebyshev semi-iterative
/// approach for accelerating projective and position-based dynamics", Algorithm 1; `analysis.position_based:
/// {acceleration: chebyshev, spectral_radius: rho}`): after sweep k (x^ the sweep's result from x^k)
///   omega_1 = 1,  omega_2 = 2 / (2 - rho^2),  omega_{k+1} = 4 / (4 - rho^2 omega_k),
///   x^{k+1} = omega_{k+1} (x^ - x^{k-1}) + x^{k-1}.
/// The consistent XPBD shares s_e (PbdConstraints::shares) are combined alike, so that x = x* + W sum_e s_e still
/// holds and the fixed point (the backward-Euler step) is unchanged. Every rank combines its owned positions and
/// its own constraints' shares: the same numbers on any rank count.
/// The theory wants a symmetric iteration with a real spectrum in [-rho, rho]; the coloured Gauss-Seidel sweep is
/// not symmetric. Measured (docs/theory/design.md, "Position-based integrator"): with rho a little below the sweep's
/// convergence factor (0.8 - 0.9 where plain sweeps need hundreds) it saves up to half the sweeps; with rho too
/// large it diverges, and on problems the plain sweep solves in tens of sweeps it slows them down. Off by default.
#include <petscvec.h>

#include <span>
#include <vector>

#include "linalg/petsc_util.hpp"
#include "pbd/pbd_sweep.hpp"

namespace edgefem {

class ChebyshevAcceleration {
 public:
  /// rho in (0, 1).
  ChebyshevAcceleration(const PbdConstraints& sweep, double rho);
  /// At the start of a step: x^0 = x, s^0 = shares.
  void start(Vec x, std::span<const double> shares);
  /// After a sweep: x and shares hold the sweep's x^, s^; replaced by x^{k+1}, s^{k+1} (x's ghosts updated).
  /// Collective.
  void combine(Vec x, std::span<double> shares);

 private:
  double rho_;
  int k_ = 0;  ///< sweeps combined since start
  double omega_ = 1.0;
  PetscOwner<Vec, VecDestroy> x_prev_, x_prev2_;  ///< x^k, x^{k-1}
  std::vector<double> s_prev_, s_prev2_;
};

}  // namespace edgefem
