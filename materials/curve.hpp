// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file curve.hpp
/// Nonlinear strain-stress curves for Volino's membrane (materials/volino.hpp): one curve per deformation mode
/// (weft, warp, shear), given as (strain, stress) points, e.g. from a tensile test converted with Volino's
/// eqs. (15)-(17).
///
/// The curve sigma(eps):
/// - the points are given for eps >= 0 with strictly increasing strains; (0, 0) is added when absent, and a point
///   at eps = 0 must have stress 0;
/// - between knots: Steffen's monotone C^1 piecewise cubic Hermite interpolation (M. Steffen, "A simple method
///   for monotonic interpolation in one dimension", A&A 239, 443 (1990)). The derivative at an interior knot i is
///     d_i = (sign s_{i-1} + sign s_i) min(|s_{i-1}|, |s_i|, |p_i| / 2),  p_i = (s_{i-1} h_i + s_i h_{i-1}) / (h_{i-1} + h_i),
///   (s the secant slopes, h the interval lengths), and at the last knot n the one-sided
///     p_n = s_{n-1} (1 + h_{n-1} / (h_{n-1} + h_{n-2})) - s_{n-2} h_{n-1} / (h_{n-1} + h_{n-2}),
///     d_n = 0 if p_n s_{n-1} <= 0, 2 s_{n-1} if |p_n| > 2 |s_{n-1}|, else p_n.
///   The knot at 0 is treated as an interior knot of the odd-extended data (the mirrored knot -x_1 has slope
///   s_0), which gives d_0 = s_0 = y_1 / x_1, and for the last knot the mirrored interval stands in for a missing
///   second interval. Properties: interpolates the points, C^1, monotone on every interval where the data are
///   monotone (no overshoot), exact on linear data;
/// - beyond the last knot: linear extrapolation with the last knot's derivative (C^1);
/// - compression: the odd extension sigma(-eps) = -sigma(eps) (Volino's appendix), C^1 at 0;
/// - energy density w(eps) = integral_0^eps sigma, the exact integral of the cubic pieces (even in eps), so that
///   dw/deps = sigma to round-off.
/// Non-monotone data are accepted (the interpolant is then co-monotone: extrema only at knots); nondecreasing()
/// tells whether the curve is, which is what makes Volino's stiffness component positive semidefinite.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace edgefem {

/// One (strain, stress) point of a curve.
struct CurvePoint {
  double strain = 0.0;
  double stress = 0.0;
};

/// sigma, dsigma/deps and w = integral_0^eps sigma of a curve at one strain.
struct CurveValue {
  double stress = 0.0;
  double slope = 0.0;
  double energy = 0.0;
};

class StressCurve {
 public:
  /// The zero curve sigma = 0.
  StressCurve();
  /// Throws std::invalid_argument naming the offending point (index, value) when the points are empty, not
  /// finite, a strain is negative, the strains are not strictly increasing, or the point at strain 0 has a
  /// nonzero stress. `what` prefixes the messages (e.g. "warp curve").
  explicit StressCurve(std::vector<CurvePoint> points, const std::string& what = "curve");
  /// The straight line sigma = slope * eps (two knots).
  static StressCurve linear(double slope);

  /// sigma(eps), sigma'(eps), w(eps) (odd, even, even in eps).
  [[nodiscard]] CurveValue evaluate(double eps) const;
  [[nodiscard]] double stress(double eps) const { return evaluate(eps).stress; }

  /// Knots (0 included), eps >= 0, and the Hermite derivative at each.
  [[nodiscard]] const std::vector<double>& knot_strains() const { return x_; }
  [[nodiscard]] const std::vector<double>& knot_stresses() const { return y_; }
  [[nodiscard]] const std::vector<double>& knot_slopes() const { return d_; }
  /// Value, slope and integral (from 0) of piece k (0 <= k < knots - 1, the cubic on [x_k, x_{k+1}]; k = knots - 1:
  /// the linear extrapolation) evaluated at any eps >= 0, for checking continuity at the knots.
  [[nodiscard]] CurveValue evaluate_piece(std::size_t k, double eps) const;
  /// True when sigma is nondecreasing for eps >= 0 (all knot derivatives >= 0 and stresses nondecreasing).
  [[nodiscard]] bool nondecreasing() const;
  /// Bytes held.
  [[nodiscard]] std::size_t bytes() const;

 private:
  std::vector<double> x_, y_, d_;     ///< knots, stresses, derivatives
  std::vector<double> c2_, c3_;       ///< cubic coefficients per interval: y + d t + c2 t^2 + c3 t^3
  std::vector<double> w_;             ///< energy integral from 0 to each knot
  std::size_t piece(double e) const;  ///< the piece containing e >= 0
};

/// Reads a curve from a CSV file: one "strain, stress" pair per line (separator ',', ';', tab or spaces), '#'
/// starts a comment, blank lines are skipped, and the first non-blank line may be a non-numeric header. Strains
/// must be >= 0 and strictly increasing. Throws std::invalid_argument naming the file, the line and the bad value
/// ("curve file 'a.csv', line 7: stress 'x1' is not a number"). Units are whatever the job declares (strain is the
/// Green strain, stress the 2nd Piola-Kirchhoff stress of Volino's eq. (9), (14)).
/// materials/ reports bad values as std::invalid_argument; solver/model.cpp rethrows it as an InputError naming
/// the job file, line and key.
std::vector<CurvePoint> read_curve_csv(const std::string& path);

}  // namespace edgefem
