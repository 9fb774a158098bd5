// SPDX-License-Identifier: BSD-3-Clause
#include "contact/barrier.hpp"

#include <cmath>
#include <limits>

namespace edgefem::contact {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();
}

double barrier(double d, double dh) {
  if (d >= dh) return 0.0;
  if (d <= 0.0) return kInfinity;
  const double g = d - dh;
  return -g * g * std::log(d / dh);
}

double barrier_first_derivative(double d, double dh) {
  if (d >= dh) return 0.0;
  if (d <= 0.0) return -kInfinity;
  const double g = d - dh;
  return -2.0 * g * std::log(d / dh) - g * g / d;
}

double barrier_second_derivative(double d, double dh) {
  if (d >= dh) return 0.0;
  if (d <= 0.0) return kInfinity;
  return -2.0 * std::log(d / dh) + (dh - d) * (3.0 * d + dh) / (d * d);
}

}  // namespace edgefem::contact
