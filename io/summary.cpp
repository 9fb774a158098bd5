#include "io/summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <limits>
#include <system_error>

#include "core/error.hpp"
#include "io/vtk_output.hpp"
#include "partition/collective.hpp"

namespace edgefem {

Spread spread_over_ranks(MPI_Comm comm, double value) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  double lo = 0, hi = 0, sum = 0;
  MPI_Allreduce(&value, &lo, 1, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(&value, &hi, 1, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(&value, &sum, 1, MPI_DOUBLE, MPI_SUM, comm);
  return {lo, hi, sum / size};
}

std::vector<double> gather_on_rank0(MPI_Comm comm, double value) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  std::vector<double> all(rank == 0 ? static_cast<std::size_t>(size) : 0);
  MPI_Gather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, comm);
  return all;
}

const std::vector<std::string>& rank_phase_names() {
  static const std::vector<std::string> names{"read",
                                              "partition",
                                              "distribute",
                                              "setup",
                                              "assembly",
                                              "assembly_local",
                                              "assembly_local_cpu",
                                              "assembly_insertion",
                                              "assembly_exchange",
                                              "assembly_barrier_wait",
                                              "pc_setup",
                                              "ksp",
                                              "output",
                                              "total"};
  return names;
}

std::vector<double> rank_phase_values(const RunSummary& s) {
  const auto v = [](const std::optional<double>& x) { return x ? *x : std::numeric_limits<double>::quiet_NaN(); };
  const auto& t = s.phases_s;
  const auto& a = s.assembly_split_s;
  return {v(t.read),      v(t.partition), v(t.distribute),   v(t.setup),    v(t.assembly), v(a.local),  v(a.local_cpu),
          v(a.insertion), v(a.exchange),  v(a.barrier_wait), v(t.pc_setup), v(t.ksp),      v(t.output), v(t.total)};
}

namespace {

/// Length of the valid UTF-8 sequence at s[i] (0: not valid UTF-8: a stray or overlong byte, a surrogate, > U+10FFFF).
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  std::size_t n = 0;
  unsigned int code = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2, code = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, code = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, code = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr unsigned int smallest[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < smallest[n] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

/// Writes the members of one JSON object, one per line at a given indentation.
class ObjectWriter {
 public:
  ObjectWriter(std::string& out, int indent) : out_(out), indent_(indent) { out_ += "{"; }
  void raw(const std::string& key, const std::string& json) {
    out_ += first_ ? "\n" : ",\n";
    first_ = false;
    out_.append(static_cast<std::size_t>(indent_ + 2), ' ');
    out_ += json_string(key) + ": " + json;
  }
  void close() {
    if (!first_) {
      out_ += "\n";
      out_.append(static_cast<std::size_t>(indent_), ' ');
    }
    out_ += "}";
  }
  [[nodiscard]] int inner() const { return indent_ + 2; }

 private:
  std::string& out_;
  int indent_;
  bool first_ = true;
};

std::string optional_string(const std::optional<std::string>& s) { return s ? json_string(*s) : "null"; }
std::string seconds(const std::optional<double>& s) { return s ? json_number(*s, 9) : "null"; }

std::string array(const double* x, std::size_t n, int digits = 17) {
  std::string out = "[";
  for (std::size_t i = 0; i < n; ++i) out += (i ? ", " : "") + json_number(x[i], digits);
  return out + "]";
}

std::string spread(const Spread& s) {
  return "{\"min\": " + json_number(s.min) + ", \"max\": " + json_number(s.max) + ", \"mean\": " + json_number(s.mean) +
         "}";
}

}  // namespace

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char code[8];
          std::snprintf(code, sizeof code, "\\u%04x", c);
          out += code;
        } else if (c >= 0x80) {
          const std::size_t n = utf8_length(s, i);
          if (n == 0) {
            out += "\\ufffd";
            ++i;
          } else {
            out.append(s, i, n);
            i += n;
          }
          continue;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  return out + "\"";
}

std::string json_number(double x, int digits) {
  if (!std::isfinite(x)) return "null";
  // The shortest of 15..`digits` digits that reads back as the same double (0.05, not 0.050000000000000003).
  char text[40];
  for (int d = std::min(15, digits); d <= digits; ++d) {
    std::snprintf(text, sizeof text, "%.*g", d, x);
    if (d == digits || std::strtod(text, nullptr) == x) break;
  }
  return text;
}

namespace {

/// A JSON object at indentation `indent` whose members `members(ObjectWriter&)` writes.
template <class Members>
std::string object(int indent, Members&& members) {
  std::string out;
  ObjectWriter o(out, indent);
  members(o);
  o.close();
  return out;
}

std::string mesh_json(const std::optional<RunSummary::Mesh>& mesh, int indent) {
  if (!mesh) return "null";
  return object(indent, [&](ObjectWriter& o) {
    o.raw("source", json_string(mesh->source));
    o.raw("vertices", std::to_string(mesh->vertices));
    o.raw("cells", std::to_string(mesh->cells));
    o.raw("cell_kind", json_string(mesh->cell_kind));
    o.raw("dofs", std::to_string(mesh->dofs));
  });
}

std::string partition_json(const std::optional<RunSummary::Partition>& partition, int indent) {
  if (!partition) return "null";
  return object(indent, [&](ObjectWriter& o) {
    o.raw("method", json_string(partition->method));
    o.raw("owned_vertices", spread(partition->owned_vertices));
    o.raw("ghost_vertices", spread(partition->ghost_vertices));
    o.raw("cells", partition->cells ? spread(*partition->cells) : "null");
  });
}

std::string analysis_json(const RunSummary& s, int indent) {
  if (s.analysis_type.empty()) return "null";
  return object(indent, [&](ObjectWriter& o) {
    o.raw("type", json_string(s.analysis_type));
    for (const auto& [key, value] : s.analysis) o.raw(key, value);
  });
}

std::string phases_json(const RunSummary::Phases& t, int indent) {
  return object(indent, [&](ObjectWriter& o) {
    o.raw("read", seconds(t.read));
    o.raw("partition", seconds(t.partition));
    o.raw("distribute", seconds(t.distribute));
    o.raw("setup", seconds(t.setup));
    o.raw("assembly", seconds(t.assembly));
    o.raw("pc_setup", seconds(t.pc_setup));
    o.raw("ksp", seconds(t.ksp));
    o.raw("output", seconds(t.output));
    o.raw("total", seconds(t.total));
  });
}

std::string phases_per_rank_json(const std::vector<std::vector<double>>& phases, int indent) {
  if (phases.empty()) return "null";
  return object(indent, [&](ObjectWriter& o) {
    const auto& names = rank_phase_names();
    for (std::size_t k = 0; k < names.size() && k < phases.size(); ++k)
      o.raw(names[k], array(phases[k].data(), phases[k].size(), 9));
  });
}

std::string solver_json(const std::optional<RunSummary::Solver>& solver, int indent) {
  if (!solver) return "null";
  return object(indent, [&](ObjectWriter& o) {
    o.raw("newton_iterations", std::to_string(solver->newton_iterations));
    o.raw("ksp_iterations", std::to_string(solver->ksp_iterations));
    o.raw("pc_setups", std::to_string(solver->pc_setups));
    o.raw("preconditioner", json_string(solver->preconditioner));
  });
}

std::string memory_json(const RunSummary& s, int indent) {
  if (s.peak_mb_per_rank.empty()) return "null";
  double hi = s.peak_mb_per_rank.front(), sum = 0;
  for (const double m : s.peak_mb_per_rank) hi = std::max(hi, m), sum += m;
  return object(indent, [&](ObjectWriter& o) {
    o.raw("peak_mb_max_rank", json_number(hi, 9));
    o.raw("peak_mb_total", json_number(sum, 9));
    o.raw("peak_mb_per_rank", array(s.peak_mb_per_rank.data(), s.peak_mb_per_rank.size(), 9));
    o.raw("estimated_peak_mb_max_rank", s.estimated_peak_mb ? json_number(*s.estimated_peak_mb, 9) : "null");
  });
}

std::string displacement_json(const std::optional<RunSummary::Displacement>& largest, int indent) {
  if (!largest) return "null";
  const auto& d = *largest;
  return object(indent, [&](ObjectWriter& o) {
    o.raw("magnitude", json_number(d.magnitude));
    o.raw("reference_point", array(d.reference_point.data(), 3));
    o.raw("u", array(d.u.data(), 3));
  });
}

std::string integers(const std::vector<long long>& x) {
  std::string out = "[";
  for (std::size_t i = 0; i < x.size(); ++i) out += (i ? ", " : "") + std::to_string(x[i]);
  return out + "]";
}

std::string contact_json(const std::optional<RunSummary::Contact>& c, int indent) {
  if (!c) return "null";
  std::string out;
  ObjectWriter o(out, indent);
  o.raw("method", json_string(c->method));
  o.raw("activation_distance", json_number(c->activation_distance));
  o.raw("stiffness", json_number(c->stiffness));
  o.raw("deepest_penetration", json_number(c->deepest_penetration));
  o.raw("max_active", std::to_string(c->max_active));
  std::string obstacles = "[";
  for (std::size_t k = 0; k < c->obstacles.size(); ++k) {
    const double* f = 3 * k + 2 < c->forces.size() ? &c->forces[3 * k] : nullptr;
    const double zero[3] = {0.0, 0.0, 0.0};
    obstacles += std::string(k ? ", " : "") + "{\"name\": " + json_string(c->obstacles[k]) +
                 ", \"force\": " + array(f ? f : zero, 3) + "}";
  }
  o.raw("obstacles", obstacles + "]");
  o.raw("seconds", "{\"residual\": " + json_number(c->seconds_residual, 9) + ", \"hessian\": " +
                       json_number(c->seconds_hessian, 9) + ", \"step_limit\": " +
                       json_number(c->seconds_step_limit, 9) + "}");
  o.raw("steps", "{\"step\": " + integers(c->step) + ", \"active\": " + integers(c->active) +
                     ", \"min_gap\": " + array(c->min_gap.data(), c->min_gap.size()) +
                     ", \"penetration\": " + array(c->penetration.data(), c->penetration.size()) + "}");
  o.close();
  return out;
}

}  // namespace

std::string to_json(const RunSummary& s) {
  std::string out;
  ObjectWriter top(out, 0);
  const int in = top.inner();
  top.raw("schema", json_string("edgefem-summary/1"));
  top.raw("version", json_string(s.version));
  top.raw("job", json_string(s.job));
  top.raw("status", json_string(s.stopped ? "stopped" : s.exit_code == 0 ? "ok" : "error"));
  top.raw("exit_code", std::to_string(s.exit_code));
  top.raw("error", optional_string(s.error));
  top.raw("started", json_string(s.started));
  top.raw("command", json_string(s.command));
  top.raw("ranks", std::to_string(s.ranks));
  top.raw("threads_per_rank", std::to_string(s.threads_per_rank));
  top.raw("oversubscribed", s.oversubscribed ? "true" : "false");
  top.raw("mesh", mesh_json(s.mesh, in));
  top.raw("partition", partition_json(s.partition, in));
  top.raw("analysis", analysis_json(s, in));
  top.raw("phases_s", phases_json(s.phases_s, in));
  top.raw("phases_per_rank_s", phases_per_rank_json(s.phases_per_rank_s, in));
  top.raw("solver", solver_json(s.solver, in));
  top.raw("memory", memory_json(s, in));
  top.raw("largest_displacement", displacement_json(s.largest_displacement, in));
  top.raw("contact", contact_json(s.contact, in));
  top.raw("output", optional_string(s.output));
  top.close();
  return out + "\n";
}

void write_summary(const std::string& directory, const RunSummary& summary) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) throw InputError(directory + ": cannot create the output directory for summary.json: " + ec.message());
  const std::string path = (std::filesystem::path(directory) / "summary.json").string();
  try {
    write_file_atomically(path, to_json(summary));
  } catch (const std::runtime_error& e) {  // (its message names the file, but as "VTK output")
    throw InputError(path + ": cannot write the run summary: " + e.what());
  }
}

void write_summary_collectively(MPI_Comm comm, const std::string& directory, RunSummary& summary, double peak_mb) {
  summary.peak_mb_per_rank = gather_on_rank0(comm, peak_mb);
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::vector<double> mine = rank_phase_values(summary);
  const std::size_t n = mine.size();
  std::vector<double> all(rank == 0 ? n * static_cast<std::size_t>(size) : 0);
  MPI_Gather(mine.data(), static_cast<int>(n), MPI_DOUBLE, all.data(), static_cast<int>(n), MPI_DOUBLE, 0, comm);
  summary.phases_per_rank_s.clear();
  if (rank == 0) {
    summary.phases_per_rank_s.assign(n, std::vector<double>(static_cast<std::size_t>(size)));
    for (std::size_t r = 0; r < static_cast<std::size_t>(size); ++r)
      for (std::size_t k = 0; k < n; ++k) summary.phases_per_rank_s[k][r] = all[r * n + k];
  }
  run_collectively(comm, [&] {
    if (rank == 0) write_summary(directory, summary);
  });
}

std::string iso8601_utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace edgefem
