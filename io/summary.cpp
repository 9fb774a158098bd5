// SPDX-License-Identifier: BSD-3-Clause
#include "io/summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <limits>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/setup_laps.hpp"
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

const std::vector<std::string>& setup_split_names() {
  static const std::vector<std::string> names(setup_laps::kNames.begin(), setup_laps::kNames.end());
  return names;
}

const std::vector<std::string>& rank_phase_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n{"job", "read", "partition", "distribute", "setup"};
    for (const std::string& s : setup_split_names()) n.push_back("setup_" + s);
    for (const char* s : {"before_steps", "assembly", "assembly_local", "assembly_local_cpu", "assembly_insertion",
                          "assembly_exchange", "assembly_barrier_wait", "pc_setup", "first_pc_setup", "ksp", "output",
                          "total"})
      n.emplace_back(s);
    return n;
  }();
  return names;
}

std::vector<double> rank_phase_values(const RunSummary& s) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto v = [nan](const std::optional<double>& x) { return x ? *x : nan; };
  const auto& t = s.phases_s;
  const auto& a = s.assembly_split_s;
  std::vector<double> out{v(t.job), v(t.read), v(t.partition), v(t.distribute), v(t.setup)};
  for (std::size_t k = 0; k < setup_split_names().size(); ++k)
    out.push_back(k < s.setup_split_s.size() ? s.setup_split_s[k] : nan);
  for (const double x : {v(t.before_steps), v(t.assembly), v(a.local), v(a.local_cpu), v(a.insertion), v(a.exchange),
                         v(a.barrier_wait), v(t.pc_setup), v(s.first_pc_setup), v(t.ksp), v(t.output), v(t.total)})
    out.push_back(x);
  return out;
}

namespace {

using Json = nlohmann::ordered_json;

/// `x` rounded to `digits` significant digits; null when not finite.
Json number(double x, int digits = 17) {
  if (!std::isfinite(x)) return nullptr;
  char text[40];
  std::snprintf(text, sizeof text, "%.*g", digits, x);
  return std::strtod(text, nullptr);
}

Json seconds(const std::optional<double>& s) { return s ? number(*s, 9) : Json(nullptr); }

Json numbers(const double* x, std::size_t n, int digits = 17) {
  Json out = Json::array();
  for (std::size_t i = 0; i < n; ++i) out.push_back(number(x[i], digits));
  return out;
}

Json spread(const Spread& s) { return {{"min", number(s.min)}, {"max", number(s.max)}, {"mean", number(s.mean)}}; }

template <class T, class F>
Json optional_json(const std::optional<T>& value, F&& to_json) {
  return value ? to_json(*value) : Json(nullptr);
}

Json provenance_json(const Provenance& p) {
  return {{"version", p.version}, {"git_describe", p.git_describe}, {"petsc", p.petsc},
          {"mpi", p.mpi},         {"vtk", p.vtk},                   {"metis", p.metis},
          {"hosts", p.hosts},     {"ranks", p.ranks},               {"threads_per_rank", p.threads_per_rank}};
}

Json mesh_json(const RunSummary::Mesh& m) {
  return {{"source", m.source}, {"vertices", m.vertices}, {"cells", m.cells}, {"cell_kind", m.cell_kind},
          {"dofs", m.dofs}};
}

Json partition_json(const RunSummary::Partition& p) {
  return {{"method", p.method},
          {"owned_vertices", spread(p.owned_vertices)},
          {"ghost_vertices", spread(p.ghost_vertices)},
          {"cells", optional_json(p.cells, spread)}};
}

/// The analysis values are JSON text already (json_number, json_string).
Json analysis_json(const RunSummary& s) {
  if (s.analysis_type.empty()) return nullptr;
  Json out = {{"type", s.analysis_type}};
  for (const auto& [key, value] : s.analysis) out[key] = Json::parse(value);
  return out;
}

Json phases_json(const RunSummary::Phases& t) {
  return {{"job", seconds(t.job)},           {"read", seconds(t.read)},           {"partition", seconds(t.partition)},
          {"distribute", seconds(t.distribute)}, {"setup", seconds(t.setup)},   {"assembly", seconds(t.assembly)},
          {"pc_setup", seconds(t.pc_setup)}, {"ksp", seconds(t.ksp)},             {"output", seconds(t.output)},
          {"total", seconds(t.total)},       {"before_steps", seconds(t.before_steps)}};
}

/// Rank 0's set-up laps (wall or CPU seconds) by name; null when the set-up did not end.
Json setup_split_json(const std::vector<double>& laps) {
  if (laps.empty()) return nullptr;
  Json out = Json::object();
  const auto& names = setup_split_names();
  for (std::size_t k = 0; k < names.size() && k < laps.size(); ++k) out[names[k]] = number(laps[k], 9);
  return out;
}

Json phases_per_rank_json(const std::vector<std::vector<double>>& phases) {
  if (phases.empty()) return nullptr;
  Json out = Json::object();
  const auto& names = rank_phase_names();
  for (std::size_t k = 0; k < names.size() && k < phases.size(); ++k)
    out[names[k]] = numbers(phases[k].data(), phases[k].size(), 9);
  return out;
}

Json solver_json(const RunSummary::Solver& s) {
  return {{"newton_iterations", s.newton_iterations}, {"ksp_iterations", s.ksp_iterations},
          {"pc_setups", s.pc_setups},                 {"preconditioner", s.preconditioner}};
}

/// The account: start-up, structures, transients, totals against the measured peaks, per cell above start-up.
Json account_json(const RunSummary::MemoryAccount& a, double peak_total) {
  Json structures = Json::object();
  double sum = a.start_up_mb + a.transients_mb + a.libraries_mb;
  for (const auto& [name, mb] : a.structures) structures[name] = number(mb, 6), sum += mb;
  Json phases = Json::array();
  for (const auto& p : a.phases)
    phases.push_back({{"phase", p.name},
                      {"resident_mb_per_rank", numbers(p.resident_mb.data(), p.resident_mb.size(), 6)},
                      {"heap_allocated_mb_per_rank", numbers(p.heap_allocated_mb.data(), p.heap_allocated_mb.size(), 6)}});
  const double cells = a.tets > 0 ? static_cast<double>(a.tets) : 1.0;
  Json per_cell = Json::object();
  for (const auto& [name, mb] : a.structures) per_cell[name] = number(mb * 1048576.0 / cells, 5);
  per_cell["transients"] = number(a.transients_mb * 1048576.0 / cells, 5);
  return {{"start_up_mb", number(a.start_up_mb, 6)},
          {"structures_mb", structures},
          {"transients_mb", number(a.transients_mb, 6)},
          {"libraries_and_shared_memory_mb", number(a.libraries_mb, 6)},
          {"unaccounted_heap_mb", number(a.unaccounted_heap_mb, 6)},
          {"total_mb", number(sum, 6)},
          {"total_mb_per_rank", numbers(a.total_mb_per_rank.data(), a.total_mb_per_rank.size(), 6)},
          {"total_over_peak", peak_total > 0 ? number(sum / peak_total, 4) : Json(nullptr)},
          {"peak_above_start_up_bytes_per_cell", number((peak_total - a.start_up_mb) * 1048576.0 / cells, 5)},
          {"bytes_per_cell", per_cell},
          {"phases", phases}};
}

Json memory_json(const RunSummary& s) {
  if (s.peak_mb_per_rank.empty()) return nullptr;
  double hi = s.peak_mb_per_rank.front(), sum = 0;
  for (const double m : s.peak_mb_per_rank) hi = std::max(hi, m), sum += m;
  return {{"peak_mb_max_rank", number(hi, 9)},
          {"peak_mb_total", number(sum, 9)},
          {"peak_mb_per_rank", numbers(s.peak_mb_per_rank.data(), s.peak_mb_per_rank.size(), 9)},
          {"estimated_peak_mb_max_rank", s.estimated_peak_mb ? number(*s.estimated_peak_mb, 9) : Json(nullptr)},
          {"account", s.memory_account ? account_json(*s.memory_account, sum) : Json(nullptr)}};
}

Json displacement_json(const RunSummary::Displacement& d) {
  return {{"magnitude", number(d.magnitude)},
          {"reference_point", numbers(d.reference_point.data(), 3)},
          {"u", numbers(d.u.data(), 3)}};
}

/// JSON text; bytes that are not UTF-8 become U+FFFD.
std::string dump(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

Json contact_json(const RunSummary::Contact& c) {
  Json obstacles = Json::array();
  for (std::size_t k = 0; k < c.obstacles.size(); ++k) {
    const double zero[3] = {0.0, 0.0, 0.0};
    const double* f = 3 * k + 2 < c.forces.size() ? &c.forces[3 * k] : zero;
    obstacles.push_back({{"name", c.obstacles[k]}, {"force", numbers(f, 3)}});
  }
  return {{"method", c.method},
          {"activation_distance", number(c.activation_distance)},
          {"stiffness", number(c.stiffness)},
          {"deepest_penetration", number(c.deepest_penetration)},
          {"max_active", c.max_active},
          {"obstacles", obstacles},
          {"seconds",
           {{"residual", number(c.seconds_residual, 9)},
            {"hessian", number(c.seconds_hessian, 9)},
            {"step_limit", number(c.seconds_step_limit, 9)}}},
          {"steps",
           {{"step", c.step},
            {"active", c.active},
            {"min_gap", numbers(c.min_gap.data(), c.min_gap.size())},
            {"penetration", numbers(c.penetration.data(), c.penetration.size())}}}};
}

Json self_contact_json(const RunSummary::SelfContact& c) {
  const auto sum = [](const std::vector<double>& v) {
    double s = 0.0;
    for (const double x : v) s += x;
    return s;
  };
  const auto list = [](const std::vector<double>& v) { return numbers(v.data(), v.size()); };
  long long narrow = 0, ccd = 0;
  for (std::size_t k = 0; k < c.narrow_pairs.size(); ++k) narrow += c.narrow_pairs[k], ccd += c.ccd_pairs[k];
  return {{"activation_distance", number(c.activation_distance)},
          {"stiffness", number(c.stiffness)},
          {"surface_vertices", c.surface_vertices},
          {"max_active", c.max_active},
          {"min_distance", number(c.min_distance)},
          {"seconds",
           {{"broad_phase", number(sum(c.broad), 9)},
            {"narrow_phase", number(sum(c.narrow), 9)},
            {"ccd", number(sum(c.ccd), 9)},
            {"exchange", number(sum(c.exchange), 9)},
            {"assembly", number(sum(c.assembly), 9)},
            {"total", number(sum(c.total), 9)},
            {"steps", number(c.step_seconds, 9)},
            {"record", number(sum(c.record), 9)}}},
          {"cpu_seconds",
           {{"total", number(sum(c.cpu), 9)},
            {"steps", number(sum(c.step_cpu), 9)},
            {"record", number(sum(c.record_cpu), 9)},
            {"per_step", list(c.cpu)},
            {"steps_per_step", list(c.step_cpu)}}},
          {"pairs", {{"narrow_phase", narrow}, {"ccd", ccd}}},
          {"intersections", {{"output_step", c.output_step}, {"intersecting_pairs", c.intersecting_pairs}}},
          {"exchange",
           {{"newton_iterations", c.newton_iterations},
            {"bytes_received_per_iteration", list(c.bytes_per_iteration)},
            {"messages_per_iteration", list(c.messages_per_iteration)},
            {"neighbours", list(c.neighbours)},
            {"layers_built", list(c.layers_built)},
            {"owned_surface_vertices", list(c.owned_vertices)},
            {"calls",
             {{"residuals", c.calls[0]},
              {"jacobians", c.calls[1]},
              {"products", c.calls[2]},
              {"step_limits", c.calls[3]},
              {"energies", c.calls[4]},
              {"measures", c.calls[5]},
              {"steps", c.calls[6]}}}}},
          {"steps",
           {{"step", c.step},
            {"active", c.active},
            {"min_distance", list(c.min_distances)},
            {"narrow_pairs", c.narrow_pairs},
            {"ccd_pairs", c.ccd_pairs},
            {"seconds",
             {{"broad_phase", list(c.broad)},
              {"narrow_phase", list(c.narrow)},
              {"ccd", list(c.ccd)},
              {"exchange", list(c.exchange)},
              {"assembly", list(c.assembly)},
              {"total", list(c.total)}}}}}};
}

Json output_split_json(const RunSummary::OutputSplit& o) {
  Json wall = Json::object(), cpu = Json::object(), calls = Json::object();
  double main_wall = 0, main_cpu = 0;
  for (const OutputTimes::Phase& p : o.times.phases()) {
    wall[p.name] = number(p.wall, 6);
    cpu[p.name] = number(p.cpu, 6);
    calls[p.name] = p.calls;
    if (p.name.rfind("writer_", 0) != 0 || p.name == "writer_start") main_wall += p.wall, main_cpu += p.cpu;
  }
  return {{"format", o.format}, {"written_steps", o.written_steps}, {"in_run_wall_s", number(main_wall, 6)},
          {"in_run_cpu_s", number(main_cpu, 6)}, {"wall_s", wall}, {"cpu_s", cpu}, {"calls", calls}};
}

}  // namespace

std::string json_string(const std::string& s) { return dump(Json(s)); }

std::string json_number(double x, int digits) { return dump(number(x, digits)); }

std::string to_json(const RunSummary& s) {
  Json top = {{"schema", "edgefem-summary/1"},
              {"version", s.version},
              {"provenance", optional_json(s.provenance, provenance_json)},
              {"job", s.job},
              {"status", s.stopped ? "stopped" : s.exit_code == 0 ? "ok" : "error"},
              {"exit_code", s.exit_code},
              {"error", optional_json(s.error, [](const std::string& e) { return Json(e); })},
              {"started", s.started},
              {"command", s.command},
              {"ranks", s.ranks},
              {"threads_per_rank", s.threads_per_rank},
              {"oversubscribed", s.oversubscribed},
              {"mesh", optional_json(s.mesh, mesh_json)},
              {"partition", optional_json(s.partition, partition_json)},
              {"analysis", analysis_json(s)},
              {"phases_s", phases_json(s.phases_s)},
              {"setup_split_s", setup_split_json(s.setup_split_s)},
              {"setup_split_cpu_s", setup_split_json(s.setup_split_cpu_s)},
              {"first_pc_setup_s", seconds(s.first_pc_setup)},
              {"phases_per_rank_s", phases_per_rank_json(s.phases_per_rank_s)},
              {"solver", optional_json(s.solver, solver_json)},
              {"memory", memory_json(s)},
              {"largest_displacement", optional_json(s.largest_displacement, displacement_json)},
              {"contact", optional_json(s.contact, contact_json)},
              {"self_contact", optional_json(s.self_contact, self_contact_json)},
              {"output", optional_json(s.output, [](const std::string& o) { return Json(o); })},
              {"output_split", optional_json(s.output_split, output_split_json)}};
  return dump(top, 2) + "\n";
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
