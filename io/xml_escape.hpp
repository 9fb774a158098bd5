// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file xml_escape.hpp
/// Escaping of text for XML attribute values and element text, shared by the VTK (.vtu/.pvtu/.pvd) and the XDMF
/// writers.
#include <string>
#include <string_view>

namespace edgefem {

/// `s` with &, <, >, " and ' replaced by their XML entities.
inline std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace edgefem
