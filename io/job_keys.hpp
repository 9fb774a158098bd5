// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file job_keys.hpp
/// The job file's keys: one table the parser validates against (io/job.cpp: every mapping it reads takes its
/// allowed keys from a section here, so an unknown key's message lists exactly these) and that generates the
/// reference (`edgefem job --reference`, docs/reference/job-file.md; a test compares the two) and the resolved job
/// that `edgefem check` prints. A key added to the parser is added here, or the parser refuses it.
#include <span>
#include <string>
#include <string_view>

namespace YAML {
class Node;
}

namespace edgefem {

/// One key of a mapping.
struct JobKey {
  std::string_view name;
  std::string_view type;           ///< e.g. "number > 0", "one of: static, dynamic", "[x, y, z]"
  std::string_view default_value;  ///< "required", "" (none: absent means off / not used), or the default
  std::string_view unit;           ///< "" for none; "consistent units" of the job (length, time, force...)
  std::string_view meaning;
  std::string_view child = {};  ///< the section of its mapping value (or of its list's items), if any
};

/// The keys of one mapping of the job file.
struct JobSection {
  std::string_view name;     ///< e.g. "analysis.position_based", "materials[]" (an item of the list)
  std::string_view meaning;  ///< one sentence for the reference
  std::span<const JobKey> keys;
};

/// Every section, in the reference's order (the top level first).
std::span<const JobSection> job_sections();

/// The section named `name`; throws std::logic_error for a name that is not in the table (a parser bug).
const JobSection& job_section(std::string_view name);

/// The reference page (Markdown): every section and key with type, default, unit and meaning.
std::string job_reference_markdown();

/// The job `root` as YAML with every key of every mapping it has, the absent ones at their defaults (marked
/// "# default"), in the table's order: what `edgefem check` prints after the job has been read without error.
std::string resolved_job_yaml(const YAML::Node& root);

}  // namespace edgefem
