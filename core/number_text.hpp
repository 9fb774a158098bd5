// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file number_text.hpp
/// A number as text for messages, with a chosen number of significant digits (17: the double exactly).
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

}  // namespace edgefem
