// SPDX-License-Identifier: BSD-3-Clause
/// \file report.cpp
/// The run's summary lines (report.hpp).
#include "run/report.hpp"

#include <petscsys.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "core/setup_laps.hpp"
#include "run/memory_budget.hpp"
#include "solver/assembly_times.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace edgefem {
namespace {

PetscErrorCode (*printing_before_quiet)(FILE*, const char[], va_list) = nullptr;

/// PetscVFPrintf in a QuietScope: stdout dropped, anything else printed as before.
PetscErrorCode drop_stdout(FILE* fd, const char format[], va_list arguments) {
  if (fd == PETSC_STDOUT || fd == stdout) return 0;
  return printing_before_quiet(fd, format, arguments);
}

}  // namespace

QuietScope::QuietScope(bool quiet) : active_(quiet && PetscVFPrintf != drop_stdout) {
  if (!active_) return;
  printing_before_quiet = PetscVFPrintf;
  PetscVFPrintf = drop_stdout;
}

QuietScope::~QuietScope() {
  if (active_) PetscVFPrintf = printing_before_quiet;
}

double peak_memory_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  // The kernel raises its high-water mark (ru_maxrss, VmHWM) only now and then (on unmaps, at exit), so it can lag
  // the resident size of now: the peak is at least that.
  const double resident = resident_bytes() / (1024.0 * 1024.0);
  return std::max(static_cast<double>(usage.ru_maxrss) / 1024.0, resident);
}

int threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

/// Largest displacement, volume change, deformed bounding box, peak memory (collective; rank 0 prints). Returns
/// the largest displacement (every rank).
RunSummary::Displacement print_state_summary(MPI_Comm comm, const LocalMesh& mesh, const std::vector<double>& x) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  struct {
    double value;
    int rank;
  } local_max{0.0, rank}, global_max{};
  std::array<double, 6> where{};  // reference point and displacement of the largest displacement
  for (LocalIndex v = 0; v < mesh.n_owned; ++v) {
    double u2 = 0;
    for (int d = 0; d < 3; ++d) u2 += std::pow(x[3 * v + d] - mesh.mesh.coords[3 * v + d], 2);
    if (std::sqrt(u2) > local_max.value) {
      local_max.value = std::sqrt(u2);
      for (int d = 0; d < 3; ++d) {
        where[d] = mesh.mesh.coords[3 * v + d];
        where[3 + d] = x[3 * v + d] - mesh.mesh.coords[3 * v + d];
      }
    }
  }
  MPI_Allreduce(&local_max, &global_max, 1, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
  MPI_Bcast(where.data(), 6, MPI_DOUBLE, global_max.rank, comm);
  // Volume (reference and deformed, from the signed tet volumes) or, for a membrane, area; and the deformed
  // bounding box.
  const bool solid = mesh.mesh.n_tets() > 0 || mesh.mesh.n_triangles() == 0;
  auto measure = [&](const double* p, LocalIndex t) {
    const LocalIndex* v = (solid ? mesh.mesh.tets.data() + 4 * static_cast<std::size_t>(t)
                                 : mesh.mesh.triangles.data() + 3 * static_cast<std::size_t>(t));
    double a[3], b[3], c[3] = {0, 0, 0};
    for (int d = 0; d < 3; ++d) {
      a[d] = p[3 * v[1] + d] - p[3 * v[0] + d];
      b[d] = p[3 * v[2] + d] - p[3 * v[0] + d];
      if (solid) c[d] = p[3 * v[3] + d] - p[3 * v[0] + d];
    }
    const double n[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
    return solid ? (n[0] * c[0] + n[1] * c[1] + n[2] * c[2]) / 6.0
                 : 0.5 * std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  };
  double volumes[2] = {0, 0}, volumes_sum[2] = {0, 0};
  for (LocalIndex t = 0; t < (solid ? mesh.mesh.n_tets() : mesh.mesh.n_triangles()); ++t) {
    volumes[0] += measure(mesh.mesh.coords.data(), t);
    volumes[1] += measure(x.data(), t);
  }
  MPI_Allreduce(volumes, volumes_sum, 2, MPI_DOUBLE, MPI_SUM, comm);
  double box_min[3] = {1e300, 1e300, 1e300}, box_max[3] = {-1e300, -1e300, -1e300}, gmin[3], gmax[3];
  for (LocalIndex v = 0; v < mesh.n_owned; ++v)
    for (int d = 0; d < 3; ++d) {
      box_min[d] = std::min(box_min[d], x[3 * v + d]);
      box_max[d] = std::max(box_max[d], x[3 * v + d]);
    }
  MPI_Allreduce(box_min, gmin, 3, MPI_DOUBLE, MPI_MIN, comm);
  MPI_Allreduce(box_max, gmax, 3, MPI_DOUBLE, MPI_MAX, comm);
  double memory = peak_memory_mb(), memory_max = 0, memory_sum = 0;
  MPI_Allreduce(&memory, &memory_max, 1, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(&memory, &memory_sum, 1, MPI_DOUBLE, MPI_SUM, comm);
  PetscPrintf(comm,
              "  largest displacement |u| = %.9e at reference point (%.6g, %.6g, %.6g), u = (%.9e, %.9e, %.9e)\n"
              "  %s: reference %.9g, deformed %.9g (change %+.4f %%)\n"
              "  deformed bounding box: [%.6g, %.6g] x [%.6g, %.6g] x [%.6g, %.6g]\n"
              "  peak memory: %.1f MB on the largest rank, %.1f MB in all\n",
              global_max.value, where[0], where[1], where[2], where[3], where[4], where[5], solid ? "volume" : "area",
              volumes_sum[0], volumes_sum[1], 100.0 * (volumes_sum[1] / volumes_sum[0] - 1.0), gmin[0], gmax[0],
              gmin[1], gmax[1], gmin[2], gmax[2], memory_max, memory_sum);
  return {global_max.value, {where[0], where[1], where[2]}, {where[3], where[4], where[5]}};
}

/// The solver lines of the summary: counts, where the solve time went, the preconditioner.
void print_solver_summary(MPI_Comm comm, const NewtonStats& s, const std::string& preconditioner) {
  PetscPrintf(comm,
              "  solver: %d Newton iterations, %d KSP iterations, %d preconditioner set-ups (%s); assembly %.3f s, "
              "PC set-up %.3f s, KSP and vector work %.3f s\n",
              s.newton_iterations, s.ksp_iterations, s.pc_setups, preconditioner.c_str(), s.seconds_assembly,
              s.seconds_pc_setup, std::max(0.0, s.seconds - s.seconds_assembly - s.seconds_pc_setup));
}

void record_setup_laps(RunSummary& summary, const PhaseClock& clock) {
  setup_laps::stop();
  summary.phases_s.setup = clock.setup;
  summary.phases_s.before_steps = std::chrono::duration<double>(clock.last - clock.start).count();
  const auto& laps = setup_laps::seconds();
  summary.setup_split_s.assign(laps.begin(), laps.end());
  const auto& cpu = setup_laps::cpu_seconds();
  summary.setup_split_cpu_s.assign(cpu.begin(), cpu.end());
}

void print_setup_split(MPI_Comm comm, const RunSummary& summary) {
  const auto& names = setup_split_names();
  std::vector<double> mine(names.size() + 2, 0.0), top(names.size() + 2, 0.0);
  for (std::size_t k = 0; k < names.size() && k < summary.setup_split_s.size(); ++k) mine[k] = summary.setup_split_s[k];
  mine[names.size()] = summary.phases_s.setup.value_or(0.0);
  mine[names.size() + 1] = std::max(0.0, setup_laps::first_pc_setup());  // (summary.first_pc_setup: set later)
  MPI_Allreduce(mine.data(), top.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX, comm);
  std::string line;
  char item[96];
  for (std::size_t k = 0; k < names.size(); ++k) {
    if (top[k] < 0.0005) continue;
    std::snprintf(item, sizeof item, "%s%s %.3f", line.empty() ? "" : ", ", names[k].c_str(), top[k]);
    line += item;
  }
  PetscPrintf(comm, "  set-up: %.3f s, slowest rank per part: %s s; first PC set-up %.3f s\n", top[names.size()],
              line.c_str(), top[names.size() + 1]);
}

/// The solver's counts and the solve phases of summary.json (the Newton solves' assembly, PC set-up and the rest,
/// KSP and vector work), and the output phase.
void record_solve(RunSummary& summary, const NewtonStats& s, const std::string& preconditioner, double output_seconds) {
  summary.solver = RunSummary::Solver{s.newton_iterations, s.ksp_iterations, s.pc_setups, preconditioner};
  summary.phases_s.assembly = s.seconds_assembly;
  summary.phases_s.pc_setup = s.seconds_pc_setup;
  summary.phases_s.ksp = std::max(0.0, s.seconds - s.seconds_assembly - s.seconds_pc_setup);
  summary.phases_s.output = output_seconds;
  if (setup_laps::first_pc_setup() >= 0) summary.first_pc_setup = setup_laps::first_pc_setup();
  summary.assembly_split_s = {s.assembly_parts.local, s.assembly_parts.local_cpu, s.assembly_parts.insertion,
                              s.assembly_parts.exchange,
                              assembly_barriers() ? std::optional<double>(s.assembly_parts.barrier_wait)
                                                  : std::nullopt};
}

std::string describe(const Selection& s) {
  char text[160];
  switch (s.kind) {
    case Selection::Kind::region: return "region " + std::to_string(s.region);
    case Selection::Kind::box:
      std::snprintf(text, sizeof text, "box [%g, %g, %g]-[%g, %g, %g]", s.lo[0], s.lo[1], s.lo[2], s.hi[0], s.hi[1],
                    s.hi[2]);
      return text;
    case Selection::Kind::points:
      std::snprintf(text, sizeof text, "%s (%g, %g, %g)%s", s.points.size() == 1 ? "point" : "points", s.points[0][0],
                    s.points[0][1], s.points[0][2], s.points.size() == 1 ? "" : ", ...");
      return text;
    case Selection::Kind::all: break;
  }
  return "all vertices";
}

/// The total internal force on each boundary entry's vertices at the end: the reaction where they are held.
void print_reactions(MPI_Comm comm, const Job& job, const ReactionLog& reactions) {
  const auto& r = reactions.last();
  for (std::size_t b = 0; 3 * b < r.size(); ++b) {
    const std::string what = b < job.boundary.size() ? " (" + describe(job.boundary[b].select) + ")" : std::string();
    PetscPrintf(comm, "  force on boundary[%zu]%s: (%.9e, %.9e, %.9e)\n", b, what.c_str(), r[3 * b], r[3 * b + 1],
                r[3 * b + 2]);
  }
}

RunSummary::Contact begin_contact_record(const Job& job, const ContactTerms& contact) {
  RunSummary::Contact c;
  c.method = contact.barrier() ? "barrier" : "penalty";
  c.activation_distance = contact.activation_distance();
  c.stiffness = contact.stiffness();
  for (const ObstacleSpec& o : job.obstacles) c.obstacles.push_back(o.name);
  c.forces.assign(3 * c.obstacles.size(), 0.0);
  return c;
}

RunSummary::Contact begin_projection_record(const Job& job) {
  RunSummary::Contact c;
  c.method = "projection";
  for (const ObstacleSpec& o : job.obstacles) c.obstacles.push_back(o.name);
  c.forces.assign(3 * c.obstacles.size(), 0.0);
  return c;
}

void record_contact(RunSummary::Contact& record, long long step, const ContactStepReport& report,
                    std::vector<double> forces) {
  record.step.push_back(step);
  record.active.push_back(report.active);
  record.min_gap.push_back(report.min_gap);
  record.penetration.push_back(report.penetration);
  record.deepest_penetration = std::max(record.deepest_penetration, report.penetration);
  record.max_active = std::max(record.max_active, report.active);
  if (report.stiffness > 0.0) record.stiffness = report.stiffness;
  if (forces.size() == record.forces.size()) record.forces = std::move(forces);
}

void print_contact_summary(MPI_Comm comm, RunSummary::Contact& record, const ContactSeconds* seconds,
                           double solve_seconds) {
  const ContactSeconds t = seconds ? *seconds : ContactSeconds{};
  record.seconds_residual = t.residual, record.seconds_hessian = t.hessian, record.seconds_step_limit = t.step_limit;
  double smallest = std::numeric_limits<double>::infinity();
  for (const double g : record.min_gap) smallest = std::min(smallest, g);
  PetscPrintf(comm,
              "  contact (%s, activation distance %.6g, stiffness %.6g): deepest penetration %.6e, smallest gap "
              "%.6e, at most %lld active contacts in a step (%lld at the last)\n",
              record.method.c_str(), record.activation_distance, record.stiffness, record.deepest_penetration,
              smallest, record.max_active, record.active.empty() ? 0LL : record.active.back());
  for (std::size_t o = 0; o < record.obstacles.size(); ++o)
    PetscPrintf(comm, "  force of obstacle %s on the body: (%.9e, %.9e, %.9e)\n", record.obstacles[o].c_str(),
                record.forces[3 * o], record.forces[3 * o + 1], record.forces[3 * o + 2]);
  if (!seconds) return;
  if (record.method == "projection") {  // the position-based integrator's contact constraints
    PetscPrintf(comm, "  contact time (rank 0): %.3f s = generation %.3f + projections %.3f s, %.1f %% of the steps' %.3f s\n",
                t.total(), t.step_limit, t.residual, solve_seconds > 0.0 ? 100.0 * t.total() / solve_seconds : 0.0,
                solve_seconds);
    return;
  }
  PetscPrintf(comm,
              "  contact time (rank 0): %.3f s = gradients %.3f + Hessian blocks %.3f + continuous checks %.3f s, "
              "%.1f %% of the steps' %.3f s\n",
              t.total(), t.residual, t.hessian, t.step_limit,
              solve_seconds > 0.0 ? 100.0 * t.total() / solve_seconds : 0.0, solve_seconds);
}

std::string energy_growth_warning(const EnergyReport& first, const std::vector<TimeStepReport>& reports) {
  const double start = std::abs(first.kinetic) + std::abs(first.strain) + std::abs(first.attachment) +
                       std::abs(first.contact);
  double work = 0.0;
  for (const TimeStepReport& r : reports) {
    work = std::max(work, std::abs(r.energy.external_work));
    const double growth = r.energy.total() - first.total(), given = start + work;
    if (!(growth > given)) continue;  // (NaN: no verdict)
    char text[400];
    std::snprintf(text, sizeof text,
                  "the total energy grew by %.3e by step %lld (t = %.6g), more than the %.3e the run was given (its "
                  "start and the loads' work): the steps created energy, the motion is not a physical one (a "
                  "smaller dt or more iterations; docs/guide/position-based.md, \"Convergence\")",
                  growth, r.step, r.time, given);
    return text;
  }
  return {};
}

RunSummary::SelfContact begin_self_contact_record(const SelfContactTerms& terms) {
  RunSummary::SelfContact c;
  c.activation_distance = terms.potential().activation_distance();
  c.stiffness = terms.potential().stiffness();
  c.surface_vertices = terms.n_surface_vertices();
  c.min_distance = std::numeric_limits<double>::infinity();
  return c;
}

void record_self_contact(RunSummary::SelfContact& record, long long step, SelfContactTerms& terms,
                         std::span<const double> local_positions) {
  const double wall = MPI_Wtime(), cpu = process_cpu_seconds();
  const SelfContactReport r = terms.measure(local_positions);
  record.record.push_back(MPI_Wtime() - wall), record.record_cpu.push_back(process_cpu_seconds() - cpu);
  const SelfContactCost c = terms.cost();
  const auto since = [](const std::vector<double>& steps, double total) {
    double before = 0.0;
    for (const double s : steps) before += s;
    return total - before;
  };
  const auto since_count = [](const std::vector<long long>& steps, long long total) {
    long long before = 0;
    for (const long long s : steps) before += s;
    return total - before;
  };
  record.step.push_back(step);
  record.active.push_back(r.active);
  record.min_distances.push_back(r.min_distance);
  record.max_active = std::max(record.max_active, r.active);
  record.min_distance = std::min(record.min_distance, r.min_distance);
  record.broad.push_back(since(record.broad, c.pairs.broad));
  record.narrow.push_back(since(record.narrow, c.pairs.narrow));
  record.ccd.push_back(since(record.ccd, c.pairs.ccd));
  record.exchange.push_back(since(record.exchange, c.exchange));
  record.assembly.push_back(since(record.assembly, c.assembly));
  record.total.push_back(since(record.total, c.total));
  record.cpu.push_back(since(record.cpu, c.cpu));
  record.narrow_pairs.push_back(since_count(record.narrow_pairs, c.pairs.narrow_pairs));
  record.ccd_pairs.push_back(since_count(record.ccd_pairs, c.pairs.ccd_pairs));
}

void print_self_contact_summary(MPI_Comm comm, RunSummary::SelfContact& record, const SelfContactTerms& terms,
                                long long newton_iterations, double step_seconds) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const SelfExchangeTraffic& t = terms.traffic();
  const double it = static_cast<double>(std::max(newton_iterations, 1LL));
  const double mine[5] = {t.bytes_received / it, static_cast<double>(t.messages) / it,
                          static_cast<double>(terms.exchange().layer()->ranks.size()), static_cast<double>(t.builds),
                          static_cast<double>(terms.exchange().owned().size())};
  std::vector<double> all(5 * static_cast<std::size_t>(size));
  MPI_Allgather(mine, 5, MPI_DOUBLE, all.data(), 5, MPI_DOUBLE, comm);
  record.bytes_per_iteration.clear(), record.messages_per_iteration.clear();
  record.neighbours.clear(), record.layers_built.clear(), record.owned_vertices.clear();
  for (int r = 0; r < size; ++r) {
    const double* a = &all[5 * static_cast<std::size_t>(r)];
    record.bytes_per_iteration.push_back(a[0]), record.messages_per_iteration.push_back(a[1]);
    record.neighbours.push_back(a[2]), record.layers_built.push_back(a[3]), record.owned_vertices.push_back(a[4]);
  }
  const SelfContactCost c = terms.cost();
  record.calls = {c.residuals, c.jacobians, c.products, c.limits, c.energies, c.measures, c.steps};
  record.newton_iterations = newton_iterations;
  record.step_seconds = step_seconds;
  double sums[6] = {0, 0, 0, 0, 0, 0};
  long long narrow = 0, ccd = 0;
  for (std::size_t k = 0; k < record.step.size(); ++k) {
    sums[0] += record.broad[k], sums[1] += record.narrow[k], sums[2] += record.ccd[k];
    sums[3] += record.exchange[k], sums[4] += record.assembly[k], sums[5] += record.total[k];
    narrow += record.narrow_pairs[k], ccd += record.ccd_pairs[k];
  }
  PetscPrintf(comm,
              "  self-contact (activation distance %.6g, stiffness %.6g, %lld surface vertices): closest pair %.6e, "
              "at most %lld active pairs in a step (%lld at the last)\n",
              record.activation_distance, record.stiffness, record.surface_vertices, record.min_distance,
              record.max_active, record.active.empty() ? 0LL : record.active.back());
  PetscPrintf(comm,
              "  self-contact time (rank 0): %.3f s = broad phase %.3f + narrow phase %.3f (%lld pairs) + continuous "
              "checks %.3f (%lld pairs) + exchange %.3f + assembly %.3f s (and the rest), %.1f %% of the steps' %.3f s\n",
              sums[5], sums[0], sums[1], narrow, sums[2], ccd, sums[3], sums[4],
              step_seconds > 0.0 ? 100.0 * sums[5] / step_seconds : 0.0, step_seconds);
  double cpu = 0.0, step_cpu = 0.0;
  for (const double c : record.cpu) cpu += c;
  for (const double c : record.step_cpu) step_cpu += c;
  if (step_cpu > 0.0)
    PetscPrintf(comm, "  self-contact CPU time (rank 0, all its threads): %.3f s, %.1f %% of the steps' %.3f s\n", cpu,
                100.0 * cpu / step_cpu, step_cpu);
  double recorded = 0.0;
  for (const double r : record.record) recorded += r;
  PetscPrintf(comm, "  self-contact record after each step (active pairs, closest pair; rank 0): %.3f s\n", recorded);
  double most[2] = {0, 0};
  for (int r = 0; r < size; ++r) most[0] = std::max(most[0], all[5 * r]), most[1] = std::max(most[1], all[5 * r + 1]);
  PetscPrintf(comm,
              "  self-contact exchange per Newton iteration (%lld): at most %.0f bytes received and %.1f messages sent "
              "by a rank; rank 0: %.0f neighbours, %.0f layers built\n",
              newton_iterations, most[0], most[1], all[2], all[3]);
}

}  // namespace edgefem
