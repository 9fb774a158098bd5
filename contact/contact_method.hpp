// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file contact_method.hpp
/// The job's `contact.method` (io/job.hpp names it; contact/vertex_contact.hpp implements it).
#include <cstdint>

namespace edgefem::contact {

/// IPC's barrier (intersection-free: no iterate ever penetrates) or a penalty (cheaper, may penetrate).
enum class ContactMethod : std::uint8_t { barrier, penalty };

}  // namespace edgefem::contact
