// SPDX-License-Identifier: BSD-3-Clause
/// \file curve.cpp
/// Steffen's monotone C^1 cubic through (strain, stress) points, odd extension, exact integral; the CSV reader.
#include "materials/curve.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/number_text.hpp"

namespace edgefem {

namespace {

std::string num(double v) { return number_text(v, 17); }

double sgn(double v) { return v > 0.0 ? 1.0 : (v < 0.0 ? -1.0 : 0.0); }

}  // namespace

StressCurve::StressCurve() : StressCurve(linear(0.0)) {}

StressCurve StressCurve::linear(double slope) {
  if (!std::isfinite(slope)) throw std::invalid_argument("linear curve: slope " + num(slope) + " is not finite");
  return StressCurve({{0.0, 0.0}, {1.0, slope}}, "linear curve");
}

StressCurve::StressCurve(std::vector<CurvePoint> points, const std::string& what) {
  if (points.empty()) throw std::invalid_argument(what + ": no (strain, stress) points");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const CurvePoint& p = points[i];
    const std::string at = what + ": point " + std::to_string(i) + " (" + num(p.strain) + ", " + num(p.stress) + ")";
    if (!std::isfinite(p.strain) || !std::isfinite(p.stress)) throw std::invalid_argument(at + " is not finite");
    if (p.strain < 0.0)
      throw std::invalid_argument(at +
                                  ": negative strain (curves are given for strain >= 0 and extended to "
                                  "compression as odd functions, sigma(-eps) = -sigma(eps))");
    if (i > 0 && !(p.strain > points[i - 1].strain))
      throw std::invalid_argument(at + ": strains must be strictly increasing (previous strain " +
                                  num(points[i - 1].strain) + ")");
    if (p.strain == 0.0 && p.stress != 0.0)
      throw std::invalid_argument(at + ": the curve must pass through (0, 0) (odd extension to compression)");
  }
  if (points.front().strain > 0.0) points.insert(points.begin(), CurvePoint{0.0, 0.0});
  if (points.size() < 2) throw std::invalid_argument(what + ": needs at least one point with strain > 0");
  const std::size_t n = points.size() - 1;  // intervals
  x_.resize(n + 1);
  y_.resize(n + 1);
  for (std::size_t i = 0; i <= n; ++i) x_[i] = points[i].strain, y_[i] = points[i].stress;
  // Interval lengths and secant slopes; index -1 is the mirrored interval [-x_1, 0] of the odd extension.
  std::vector<double> h(n), s(n);
  for (std::size_t i = 0; i < n; ++i) {
    h[i] = x_[i + 1] - x_[i];
    s[i] = (y_[i + 1] - y_[i]) / h[i];
  }
  auto H = [&](std::ptrdiff_t i) { return i < 0 ? h[0] : h[static_cast<std::size_t>(i)]; };
  auto S = [&](std::ptrdiff_t i) { return i < 0 ? s[0] : s[static_cast<std::size_t>(i)]; };
  d_.resize(n + 1);
  for (std::size_t i = 0; i < n; ++i) {  // interior knots (0 included, through the mirror)
    const auto k = static_cast<std::ptrdiff_t>(i);
    const double sl = S(k - 1), sr = S(k), hl = H(k - 1), hr = H(k);
    const double p = (sl * hr + sr * hl) / (hl + hr);
    d_[i] = (sgn(sl) + sgn(sr)) * std::min({std::abs(sl), std::abs(sr), 0.5 * std::abs(p)});
  }
  {  // last knot: Steffen's one-sided derivative
    const auto k = static_cast<std::ptrdiff_t>(n);
    const double s1 = S(k - 1), s2 = S(k - 2), h1 = H(k - 1), h2 = H(k - 2);
    const double p = s1 * (1.0 + h1 / (h1 + h2)) - s2 * h1 / (h1 + h2);
    d_[n] = p * s1 <= 0.0 ? 0.0 : (std::abs(p) > 2.0 * std::abs(s1) ? 2.0 * s1 : p);
  }
  c2_.resize(n);
  c3_.resize(n);
  w_.resize(n + 1);
  w_[0] = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    c2_[i] = (3.0 * s[i] - 2.0 * d_[i] - d_[i + 1]) / h[i];
    c3_[i] = (d_[i] + d_[i + 1] - 2.0 * s[i]) / (h[i] * h[i]);
    const double t = h[i];
    w_[i + 1] = w_[i] + t * (y_[i] + t * (d_[i] / 2.0 + t * (c2_[i] / 3.0 + t * c3_[i] / 4.0)));
  }
}

std::size_t StressCurve::piece(double e) const {
  const auto it = std::upper_bound(x_.begin(), x_.end(), e);
  const std::ptrdiff_t k = (it - x_.begin()) - 1;
  return k < 0 ? 0 : static_cast<std::size_t>(k);
}

CurveValue StressCurve::evaluate_piece(std::size_t k, double e) const {
  const std::size_t n = x_.size() - 1;
  if (k > n)
    throw std::out_of_range("StressCurve::evaluate_piece: piece " + std::to_string(k) + " of " + std::to_string(n + 1));
  const double t = e - x_[k];
  CurveValue v;
  if (k == n) {
    v.stress = y_[n] + d_[n] * t;
    v.slope = d_[n];
    v.energy = w_[n] + t * (y_[n] + t * d_[n] / 2.0);
    return v;
  }
  const double d = d_[k], c2 = c2_[k], c3 = c3_[k];
  v.stress = y_[k] + t * (d + t * (c2 + t * c3));
  v.slope = d + t * (2.0 * c2 + t * 3.0 * c3);
  v.energy = w_[k] + t * (y_[k] + t * (d / 2.0 + t * (c2 / 3.0 + t * c3 / 4.0)));
  return v;
}

CurveValue StressCurve::evaluate(double eps) const {
  const double a = std::abs(eps);
  CurveValue v = evaluate_piece(piece(a), a);
  if (eps < 0.0) v.stress = -v.stress;
  return v;
}

bool StressCurve::nondecreasing() const {
  for (std::size_t i = 0; i + 1 < y_.size(); ++i)
    if (y_[i + 1] < y_[i]) return false;
  return std::all_of(d_.begin(), d_.end(), [](double d) { return d >= 0.0; });
}

std::size_t StressCurve::bytes() const {
  return sizeof(double) *
         (x_.capacity() + y_.capacity() + d_.capacity() + c2_.capacity() + c3_.capacity() + w_.capacity());
}

// ---------------------------------------------------------------------------------------------------------

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

/// Fields of a data line: split on ',' or ';' when present, else on whitespace.
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  const char sep = line.find(',') != std::string::npos ? ',' : (line.find(';') != std::string::npos ? ';' : '\0');
  if (sep) {
    std::string cur;
    for (char c : line) {
      if (c == sep) {
        out.push_back(trim(cur));
        cur.clear();
      } else {
        cur += c;
      }
    }
    out.push_back(trim(cur));
  } else {
    std::istringstream in(line);
    std::string tok;
    while (in >> tok) out.push_back(tok);
  }
  return out;
}

bool parse_double(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && errno != ERANGE && std::isfinite(v);
}

}  // namespace

std::vector<CurvePoint> read_curve_csv(const std::string& path) {
  std::ifstream in(path);
  const std::string file = "curve file '" + path + "'";
  if (!in) throw std::invalid_argument(file + ": cannot open for reading");
  std::vector<CurvePoint> pts;
  std::string raw;
  long line_no = 0, prev_line = 0;
  bool seen_content = false;
  while (std::getline(in, raw)) {
    ++line_no;
    if (line_no == 1 && raw.rfind("\xEF\xBB\xBF", 0) == 0) raw.erase(0, 3);  // UTF-8 byte-order mark
    const auto hash = raw.find('#');
    const std::string line = trim(hash == std::string::npos ? raw : raw.substr(0, hash));
    if (line.empty()) continue;
    const std::string at = file + ", line " + std::to_string(line_no) + ": ";
    const auto f = fields(line);
    double e = 0.0, s = 0.0;
    if (!seen_content) {
      seen_content = true;
      if (!f.empty() && !parse_double(f[0], e)) continue;  // header line, e.g. "strain,stress"
    }
    if (f.size() != 2)
      throw std::invalid_argument(at + "expected 2 values (strain, stress), got " + std::to_string(f.size()) + " in '" +
                                  line + "'");
    if (!parse_double(f[0], e)) throw std::invalid_argument(at + "strain '" + f[0] + "' is not a finite number");
    if (!parse_double(f[1], s)) throw std::invalid_argument(at + "stress '" + f[1] + "' is not a finite number");
    if (e < 0.0)
      throw std::invalid_argument(at + "strain " + f[0] +
                                  " is negative (curves are given for strain >= 0 and extended to compression "
                                  "as odd functions)");
    if (e == 0.0 && s != 0.0)
      throw std::invalid_argument(at + "stress " + f[1] + " at strain 0 must be 0 (the curve passes through (0, 0))");
    if (!pts.empty() && !(e > pts.back().strain))
      throw std::invalid_argument(at + "strain " + f[0] + " is not greater than the previous strain " +
                                  num(pts.back().strain) + " (line " + std::to_string(prev_line) +
                                  "): strains must be strictly increasing");
    pts.push_back({e, s});
    prev_line = line_no;
  }
  if (in.bad()) throw std::invalid_argument(file + ": read error");
  if (pts.empty()) throw std::invalid_argument(file + ": no (strain, stress) points");
  return pts;
}

}  // namespace edgefem
