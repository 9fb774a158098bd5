// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file metis_version.hpp
/// The METIS version edgefem was built with (run/provenance.hpp).
#include <string>

namespace edgefem {

/// "5.1.0" (metis.h's METIS_VER_MAJOR.MINOR.SUBMINOR).
std::string metis_version();

}  // namespace edgefem
