// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file number_text.hpp
/// A number as text for messages, with a chosen number of significant digits (17: the double exactly).
#include <cstdio>
#include <sstream>
#include <string>

namespace edgefem {

/// v written as `std::ostream << v` does with precision(precision).
inline std::string number_text(double v, int precision) {
  std::ostringstream s;
  s.precision(precision);
  s << v;
  return s.str();
}

/// v with 17 significant digits (printf's %.17g: the double exactly), for numbers written into output files.
inline std::string exact_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace edgefem
