// SPDX-License-Identifier: BSD-3-Clause
/// \file free_body.cpp
/// The rigid motions a static problem's conditions leave free (free_body.hpp).
#include "solver/free_body.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <utility>

#include "contact/obstacle.hpp"
#include "core/error.hpp"
#include "partition/collective.hpp"
#include "partition/components.hpp"
#include "solver/obstacles.hpp"

namespace edgefem {

void HeldMoments::add(int direction, const std::array<double, 3>& r) {
  double* p = m.data() + 10 * direction;
  p[0] += 1;
  for (int i = 0; i < 3; ++i) p[1 + i] += r[i];
  p[4] += r[0] * r[0], p[5] += r[0] * r[1], p[6] += r[0] * r[2];
  p[7] += r[1] * r[1], p[8] += r[1] * r[2], p[9] += r[2] * r[2];
}

namespace {

using Vector6 = Eigen::Matrix<double, 6, 1>;

/// The constraint row of component d held at r: [e_d, r x e_d].
Vector6 held_row(int d, const Eigen::Vector3d& r) {
  Vector6 row = Vector6::Zero();
  row(d) = 1;
  row.tail<3>() = r.cross(Eigen::Vector3d::Unit(d));
  return row;
}

/// The rows of every held direction: at its held vertices' centroid and one standard deviation along each principal
/// axis of their spread (the points spanning the affine hull of the held vertices; a spread below 1e-7 of the part's
/// diagonal counts as none).
std::vector<Vector6> held_rows(const HeldMoments& held) {
  std::vector<Vector6> rows;
  for (int d = 0; d < 3; ++d) {
    const double* p = held.m.data() + 10 * d;
    if (p[0] <= 0) continue;
    const Eigen::Vector3d mean = Eigen::Vector3d(p[1], p[2], p[3]) / p[0];
    Eigen::Matrix3d second;
    second << p[4], p[5], p[6], p[5], p[7], p[8], p[6], p[8], p[9];
    const Eigen::Matrix3d cov = second / p[0] - mean * mean.transpose();
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> spread(cov);
    rows.push_back(held_row(d, mean));
    for (int k = 0; k < 3; ++k)
      if (spread.eigenvalues()(k) > 1e-14)
        rows.push_back(held_row(d, mean + std::sqrt(spread.eigenvalues()(k)) * spread.eigenvectors().col(k)));
  }
  return rows;
}

/// An orthonormal basis of the null space of `rows` (6 x k).
Eigen::MatrixXd null_space(const std::vector<Vector6>& rows) {
  if (rows.empty()) return Eigen::MatrixXd::Identity(6, 6);
  Eigen::MatrixXd a(static_cast<Eigen::Index>(rows.size()), 6);
  for (std::size_t i = 0; i < rows.size(); ++i) a.row(static_cast<Eigen::Index>(i)) = rows[i].transpose();
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(a, Eigen::ComputeFullV);
  const Eigen::VectorXd& s = svd.singularValues();
  Eigen::Index rank = 0;
  while (rank < s.size() && s(rank) > 1e-10 * s(0)) ++rank;
  return svd.matrixV().rightCols(6 - rank);
}

std::array<double, 3> as_array(const Eigen::Vector3d& v) { return {v(0), v(1), v(2)}; }

/// A unit axis with its largest component positive.
Eigen::Vector3d canonical(Eigen::Vector3d a) {
  a.normalize();
  Eigen::Index i = 0;
  a.cwiseAbs().maxCoeff(&i);
  return a(i) < 0 ? Eigen::Vector3d(-a) : a;
}

}  // namespace

std::vector<FreeMotion> free_rigid_motions(const HeldMoments& held) {
  Eigen::MatrixXd modes = null_space(held_rows(held));
  std::vector<FreeMotion> free;
  // A direction no vertex is held in slides freely along its axis; the rest of the null space turns.
  Eigen::MatrixXd sliding = Eigen::MatrixXd::Zero(6, 0);
  for (int d = 0; d < 3; ++d) {
    if (held.m[10 * d] > 0) continue;
    free.push_back({false, as_array(Eigen::Vector3d::Unit(d)), {0, 0, 0}});
    sliding.conservativeResize(6, sliding.cols() + 1);
    sliding.col(sliding.cols() - 1) = Vector6::Unit(d);
  }
  const Eigen::Index turning = modes.cols() - sliding.cols();
  if (turning <= 0) return free;
  modes -= sliding * (sliding.transpose() * modes);
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(modes, Eigen::ComputeThinU);
  for (Eigen::Index k = 0; k < turning; ++k) {
    const Vector6 mode = svd.matrixU().col(k);
    const Eigen::Vector3d t = mode.head<3>(), w = mode.tail<3>();
    if (w.norm() < 1e-12) continue;
    // u(r) = t + w x r is parallel to w on the axis r = (w x t) / |w|^2.
    free.push_back({true, as_array(canonical(w)), as_array(w.cross(t) / w.squaredNorm())});
  }
  return free;
}

bool contact_removes_free_motions(const HeldMoments& held, const std::array<double, 36>& contact) {
  const Eigen::MatrixXd modes = null_space(held_rows(held));
  if (modes.cols() == 0) return true;
  const Eigen::Matrix<double, 6, 6, Eigen::RowMajor> gram(contact.data());
  const double scale = gram.trace();
  if (!(scale > 0.0)) return false;
  // The contact rows' stiffness on the free motions: positive definite when they hold every one of them.
  const Eigen::MatrixXd on_free = modes.transpose() * gram * modes;
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(on_free);
  return eigen.eigenvalues().minCoeff() > 1e-9 * scale;
}

bool solves_static_problem(const Job& job) {
  if (job.analysis_type == AnalysisType::statics) return true;
  return job.dynamic && job.dynamic->initial_state == InitialState::static_equilibrium;
}

namespace {

/// One connected part, summed over the ranks.
struct PartSummary {
  long long vertices = 0, held_components = 0;
  std::array<double, 3> lo{}, hi{};
  std::set<int> regions, facet_regions;  ///< of its cells; of its boundary facets (triangles, or membrane lines)
  std::vector<FreeMotion> free;
  HeldMoments moments;             ///< of its held components (find_free_motions)
  double near_obstacles = 0;       ///< contact candidates within the activation distance of an obstacle (any rank)
  bool held_by_obstacles = false;  ///< the obstacles hold every motion `free` lists (hold_by_obstacles)
  [[nodiscard]] std::array<double, 3> centre() const {
    return {(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2};
  }
  [[nodiscard]] double size() const {
    const double s = std::hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
    return s > 0 ? s : 1.0;
  }
};

/// Per owned vertex, bit d set when component d is fixed, displaced or rotated, or the vertex is attached.
std::vector<unsigned char> held_components(const LocalMesh& mesh, const Model& model) {
  std::vector<unsigned char> held(static_cast<std::size_t>(mesh.n_owned), 0);
  for (const DirichletDof& d : model.dirichlet) held[static_cast<std::size_t>(d.dof / 3)] |= 1U << (d.dof % 3);
  for (const Attachment& a : model.attachments)
    for (const LocalIndex v : a.vertices) held[static_cast<std::size_t>(v)] = 7;
  return held;
}

/// Every part's vertex and held-component counts and bounding box, summed (min/max) over the ranks.
void count_and_bound(MPI_Comm comm, const LocalMesh& mesh, const MeshComponents& parts,
                     const std::vector<unsigned char>& held, std::vector<PartSummary>& out) {
  const auto n = static_cast<std::size_t>(parts.count);
  std::vector<long long> counts(2 * n, 0);
  std::vector<double> bounds(6 * n, 1e300);  // lo, then -hi: one MPI_MIN
  for (LocalIndex v = 0; v < mesh.n_local(); ++v) {
    const auto p = static_cast<std::size_t>(parts.of_vertex[v]);
    if (v < mesh.n_owned) {
      ++counts[2 * p];
      for (int d = 0; d < 3; ++d) counts[2 * p + 1] += (held[v] >> d) & 1U;
    }
    const double* x = mesh.mesh.point(v);
    for (int d = 0; d < 3; ++d)
      bounds[6 * p + d] = std::min(bounds[6 * p + d], x[d]), bounds[6 * p + 3 + d] = std::min(bounds[6 * p + 3 + d], -x[d]);
  }
  MPI_Allreduce(MPI_IN_PLACE, counts.data(), static_cast<int>(counts.size()), MPI_LONG_LONG, MPI_SUM, comm);
  MPI_Allreduce(MPI_IN_PLACE, bounds.data(), static_cast<int>(bounds.size()), MPI_DOUBLE, MPI_MIN, comm);
  out.assign(n, PartSummary{});
  for (std::size_t p = 0; p < n; ++p) {
    out[p].vertices = counts[2 * p], out[p].held_components = counts[2 * p + 1];
    for (int d = 0; d < 3; ++d) out[p].lo[d] = bounds[6 * p + d], out[p].hi[d] = -bounds[6 * p + 3 + d];
  }
}

/// Every part's held moments (HeldMoments, about its box centre), summed over the ranks, and its free motions.
void find_free_motions(MPI_Comm comm, const LocalMesh& mesh, const MeshComponents& parts,
                       const std::vector<unsigned char>& held, std::vector<PartSummary>& out) {
  std::vector<HeldMoments> moments(out.size());
  for (LocalIndex v = 0; v < mesh.n_owned; ++v) {
    if (held[v] == 0) continue;
    const PartSummary& part = out[static_cast<std::size_t>(parts.of_vertex[v])];
    const std::array<double, 3> c = part.centre();
    const double* x = mesh.mesh.point(v);
    const std::array<double, 3> r{(x[0] - c[0]) / part.size(), (x[1] - c[1]) / part.size(), (x[2] - c[2]) / part.size()};
    for (int d = 0; d < 3; ++d)
      if ((held[v] >> d) & 1U) moments[static_cast<std::size_t>(parts.of_vertex[v])].add(d, r);
  }
  MPI_Allreduce(MPI_IN_PLACE, moments.data(), static_cast<int>(30 * moments.size()), MPI_DOUBLE, MPI_SUM, comm);
  for (std::size_t p = 0; p < out.size(); ++p) {
    out[p].moments = moments[p];
    out[p].free = free_rigid_motions(moments[p]);
    const std::array<double, 3> c = out[p].centre();
    for (FreeMotion& f : out[p].free)  // back to the mesh's coordinates
      for (int d = 0; d < 3; ++d) f.point[d] = c[d] + out[p].size() * f.point[d];
  }
}

/// The contact's activation distance at the start: contact.distance, or its auto value (solver/contact.cpp: 1e-3 of
/// the body's bounding-box diagonal, the union of the parts' boxes).
double activation_distance(const Job& job, const std::vector<PartSummary>& parts) {
  if (job.contact.distance > 0.0) return job.contact.distance;
  std::array<double, 3> lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
  for (const PartSummary& s : parts)
    for (int d = 0; d < 3; ++d) lo[d] = std::min(lo[d], s.lo[d]), hi[d] = std::max(hi[d], s.hi[d]);
  return 1e-3 * std::hypot(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]);
}

/// Which free parts the job's obstacles hold at the start (free_body.hpp): each part's contact rows [n, r x n] of its
/// candidates within the activation distance (the local boundary vertices, ghosts too: a row counted twice changes
/// no null space), their Gram matrix summed over the ranks. Collective.
void hold_by_obstacles(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const MeshComponents& parts,
                       std::vector<PartSummary>& out) {
  if (job.obstacles.empty()) return;
  std::vector<std::unique_ptr<contact::Obstacle>> obstacles;
  run_collectively(comm, [&] { obstacles = make_obstacles(job); });
  place_obstacles(job, obstacles, 0.0);
  const double reach = activation_distance(job, out);
  const Mesh& m = mesh.mesh;
  std::vector<char> candidate(static_cast<std::size_t>(mesh.n_local()), m.n_tets() > 0 ? 0 : 1);
  if (m.n_tets() > 0)
    for (const LocalIndex v : m.triangles) candidate[static_cast<std::size_t>(v)] = 1;
  std::vector<double> sums(37 * out.size(), 0.0);  // per part: the Gram matrix (row-major), the near count
  for (LocalIndex v = 0; v < mesh.n_local(); ++v) {
    if (!candidate[static_cast<std::size_t>(v)]) continue;
    const auto p = static_cast<std::size_t>(parts.of_vertex[v]);
    const contact::Vec3 x{m.point(v)[0], m.point(v)[1], m.point(v)[2]};
    for (const auto& obstacle : obstacles) {
      contact::Proximity near;
      if (!obstacle->proximity(x, reach, false, near) || !(near.distance < reach)) continue;
      const std::array<double, 3> c = out[p].centre();
      const Eigen::Vector3d r((x[0] - c[0]) / out[p].size(), (x[1] - c[1]) / out[p].size(),
                              (x[2] - c[2]) / out[p].size());
      const Eigen::Vector3d n(near.normal[0], near.normal[1], near.normal[2]);
      Vector6 row;
      row << n, r.cross(n);
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) sums[37 * p + static_cast<std::size_t>(6 * i + j)] += row(i) * row(j);
      sums[37 * p + 36] += 1;
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, sums.data(), static_cast<int>(sums.size()), MPI_DOUBLE, MPI_SUM, comm);
  for (std::size_t p = 0; p < out.size(); ++p) {
    std::array<double, 36> gram{};
    std::copy(sums.begin() + static_cast<std::ptrdiff_t>(37 * p), sums.begin() + static_cast<std::ptrdiff_t>(37 * p + 36),
              gram.begin());
    out[p].near_obstacles = sums[37 * p + 36];
    out[p].held_by_obstacles = !out[p].free.empty() && contact_removes_free_motions(out[p].moments, gram);
  }
}

/// The region tags of every part's cells (kind 0) and boundary facets (kind 1), gathered on every rank.
void gather_regions(MPI_Comm comm, const LocalMesh& mesh, const MeshComponents& parts, std::vector<PartSummary>& out) {
  const Mesh& m = mesh.mesh;
  const bool solid = m.n_tets() > 0;
  std::set<std::array<int, 3>> mine;  // part, kind, tag
  const auto add = [&](const std::vector<LocalIndex>& cells, const std::vector<int>& tags, std::size_t nodes, int kind) {
    for (std::size_t c = 0; c < tags.size(); ++c) mine.insert({parts.of_vertex[cells[nodes * c]], kind, tags[c]});
  };
  add(solid ? m.tets : m.triangles, solid ? m.tet_region : m.triangle_region, solid ? 4 : 3, 0);
  add(solid ? m.triangles : m.lines, solid ? m.triangle_region : m.line_region, solid ? 3 : 2, 1);
  std::vector<int> flat;
  for (const auto& e : mine) flat.insert(flat.end(), e.begin(), e.end());
  int size = 1, n = static_cast<int>(flat.size());
  MPI_Comm_size(comm, &size);
  std::vector<int> counts(size), offsets(size + 1, 0);
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  for (int r = 0; r < size; ++r) offsets[r + 1] = offsets[r] + counts[r];
  std::vector<int> all(static_cast<std::size_t>(offsets[size]));
  MPI_Allgatherv(flat.data(), n, MPI_INT, all.data(), counts.data(), offsets.data(), MPI_INT, comm);
  for (std::size_t i = 0; i + 2 < all.size(); i += 3)
    (all[i + 1] == 0 ? out[all[i]].regions : out[all[i]].facet_regions).insert(all[i + 2]);
}

std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", std::abs(x) < 1e-12 ? 0.0 : x);
  return text;
}

std::string point(const std::array<double, 3>& p) {
  std::string text = number(p[0]);
  text.insert(0, 1, '(');
  return text.append(", ").append(number(p[1])).append(", ").append(number(p[2])).append(")");
}

std::string tag_list(const std::set<int>& tags) {
  std::string text;
  int shown = 0;
  for (const int t : tags) {
    if (shown == 6) return text + ", ...";
    text += (shown++ == 0 ? "" : ", ") + std::to_string(t);
  }
  return text;
}

/// "part 2 of 3 (region 2; 125 vertices in [0, 1] x [0, 1] x [2, 3])"
std::string describe_part(std::size_t p, std::size_t n, const PartSummary& s) {
  std::string text = n == 1 ? "the body (the whole mesh: " : "part " + std::to_string(p + 1) + " of " +
                                                                  std::to_string(n) + " of the mesh (";
  text += std::string(s.regions.size() == 1 ? "region " : "regions ") + tag_list(s.regions) + "; " +
          std::to_string(s.vertices) + " vertices in [" + number(s.lo[0]) + ", " + number(s.hi[0]) + "] x [" +
          number(s.lo[1]) + ", " + number(s.hi[1]) + "] x [" + number(s.lo[2]) + ", " + number(s.hi[2]) + "])";
  return text;
}

/// The point nearest (least squares) to every rotation axis of `free`, and whether they all pass through it (within
/// 1e-6 of `size`): a pinned point's rotations turn about it.
std::pair<std::array<double, 3>, bool> common_point(const std::vector<FreeMotion>& free, double size) {
  Eigen::Matrix3d a = Eigen::Matrix3d::Zero();
  Eigen::Vector3d b = Eigen::Vector3d::Zero();
  for (const FreeMotion& f : free) {
    if (!f.rotation) continue;
    const Eigen::Vector3d d(f.direction.data()), p(f.point.data());
    const Eigen::Matrix3d across = Eigen::Matrix3d::Identity() - d * d.transpose();
    a += across, b += across * p;
  }
  const Eigen::Vector3d q = a.completeOrthogonalDecomposition().solve(b);
  bool common = a.fullPivLu().rank() == 3;
  for (const FreeMotion& f : free) {
    if (!f.rotation) continue;
    const Eigen::Vector3d d(f.direction.data()), p(f.point.data());
    common = common && ((q - p) - d * d.dot(q - p)).norm() <= 1e-6 * size;
  }
  return {as_array(q), common};
}

/// "translate along y and z and rotate about the axis along (1, 0, 0) through (0, 0.5, 0.5)"
std::string describe_motions(const std::vector<FreeMotion>& free, double size) {
  std::vector<std::string> slides, turns;
  for (const FreeMotion& f : free) {
    if (!f.rotation) {
      slides.push_back(std::string(1, "xyz"[f.direction[1] != 0 ? 1 : f.direction[2] != 0 ? 2 : 0]));
    } else {
      turns.push_back("about the axis along " + point(f.direction) + " through " + point(f.point));
    }
  }
  if (turns.size() >= 2 && slides.empty()) {
    const auto [q, common] = common_point(free, size);
    if (common)
      return "rotate about " + std::string(turns.size() == 3 ? "any axis" : "two independent axes") + " through " +
             point(q);
  }
  const auto join = [](const std::vector<std::string>& words) {
    std::string text;
    for (std::size_t i = 0; i < words.size(); ++i)
      text += (i == 0 ? "" : i + 1 == words.size() ? " and " : ", ") + words[i];
    return text;
  };
  std::string text;
  if (!slides.empty()) text = "translate along " + join(slides);
  if (turns.size() == 3 && slides.size() == 3) return text + " and rotate about any axis";
  if (!turns.empty()) text += std::string(text.empty() ? "" : " and ") + "rotate " + join(turns);
  return text;
}

/// What would hold a part: a boundary entry on one of its faces (or a box around some of its vertices).
std::string remedy(const PartSummary& s) {
  std::string select = !s.facet_regions.empty() && *s.facet_regions.rbegin() > 0
                           ? "{region: " + std::to_string(*s.facet_regions.upper_bound(0)) + "}"
                           : "{box: [" + point(s.lo) + ", " + point(s.hi) + "]}";
  std::replace(select.begin(), select.end(), '(', '['), std::replace(select.begin(), select.end(), ')', ']');
  return "a `boundary` entry that fixes or displaces its vertices in those directions (e.g. `- {select: " + select +
         ", fix: [x, y, z]}`, a clamped face; or points held away from the axes it turns about), or an `attachments` "
         "entry";
}

/// With obstacles: why they do not hold part `s` either (free_body.hpp's rule).
std::string obstacles_note(const Job& job, const std::vector<PartSummary>& parts, const PartSummary& s) {
  if (job.obstacles.empty()) return "";
  const std::string reach = number(activation_distance(job, parts));
  if (s.near_obstacles == 0)
    return "; the obstacles do not hold it either: none of its boundary vertices is within the contact distance (" +
           reach + ") of an obstacle at the start (a static body held by obstacles must start resting on them)";
  return "; the obstacles do not hold it either: the normals of the obstacles at its boundary vertices within the "
         "contact distance (" + reach + ") at the start leave some of these motions free";
}

}  // namespace

void check_static_support(MPI_Comm comm, const Job& job, const LocalMesh& mesh, const Model& model) {
  if (!solves_static_problem(job)) return;
  const MeshComponents parts = connected_components(comm, mesh);
  const std::vector<unsigned char> held = held_components(mesh, model);
  std::vector<PartSummary> summary;
  count_and_bound(comm, mesh, parts, held, summary);
  find_free_motions(comm, mesh, parts, held, summary);
  hold_by_obstacles(comm, job, mesh, parts, summary);
  gather_regions(comm, mesh, parts, summary);
  std::string problems;
  int n_free = 0;
  for (std::size_t p = 0; p < summary.size(); ++p) {
    const PartSummary& s = summary[p];
    if (s.free.empty() || s.held_by_obstacles) continue;
    ++n_free;
    problems += "\n  " + describe_part(p, summary.size(), s) +
                (s.held_components == 0
                     ? " is held by nothing (no boundary entry fixes or displaces any of its vertices, no "
                       "attachment ties one): it may "
                     : " is held in some directions only: it may still ") +
                describe_motions(s.free, s.size()) + "; hold it with " + remedy(s) + obstacles_note(job, summary, s);
  }
  if (n_free == 0) return;
  const std::string what = job.analysis_type == AnalysisType::statics ? "a static analysis"
                                                                      : "analysis.initial_state static";
  throw InputError(job.job_file + ": " + what + " needs every part of the mesh held against rigid motion, or " +
                   "its equilibrium is not unique (the stiffness is singular) and no answer can be trusted; " +
                   std::to_string(n_free) + " of " + std::to_string(summary.size()) + " part" +
                   (summary.size() == 1 ? "" : "s") + (n_free == 1 ? " is" : " are") + " free to move:" + problems +
                   "\n  (a dynamic analysis lets parts move freely: analysis.type dynamic)");
}

}  // namespace edgefem
