// SPDX-License-Identifier: BSD-3-Clause
/// \file pbd_sweep.cpp
/// Constraint sweeps of the position-based integrator (pbd_sweep.hpp).
#include "pbd/pbd_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "materials/bending.hpp"
#include "materials/element_energy_batch.hpp"
#include "materials/element_energy_inline.hpp"
#include "materials/membrane_energy.hpp"
#include "materials/tet_inversion.hpp"
#include "materials/tet_local_hessian.hpp"
#include "materials/volino.hpp"
#include "partition/collective.hpp"
#include "partition/coloring.hpp"
#include "pbd/pbd_block.hpp"
#include "solver/assembly.hpp"

namespace edgefem {

namespace {

/// Below this strain energy density per unit modulus (strain ~1e-14) a constraint is at rest and skipped: a
/// relative test, independent of units and element size (Bender's absolute 1e-6 freezes small SI elements).
constexpr double kRestDensity = 1e-28;
/// Block projections that change F by more than 0.1 (|dF|^2 > 0.01) are checked against the tet's local objective
/// (PbdConstraints::step_length), at most kMaxHalvings step halvings (then the tet waits for the next sweep).
constexpr double kCheckedChange = 0.01;
constexpr int kMaxHalvings = 12;

/// |dF|^2 of the position change W ds of a cell of V vertices (al: the rest shape's gradients, V x Q).
template <int V, int Q>
double gradient_change(const double* w, const double* ds, const double (&al)[V][Q]) {
  double change = 0.0;
  for (int r = 0; r < 3; ++r)
    for (int q = 0; q < Q; ++q) {
      double d = 0.0;
      for (int a = 0; a < V; ++a) d += w[3 * a + r] * ds[3 * a + r] * al[a][q];
      change += d * d;
    }
  return change;
}

void forward(Vec v) {
  EDGEFEM_PETSC(VecGhostUpdateBegin(v, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(v, INSERT_VALUES, SCATTER_FORWARD));
}
void reverse_add(Vec v) {
  EDGEFEM_PETSC(VecGhostUpdateBegin(v, ADD_VALUES, SCATTER_REVERSE));
  EDGEFEM_PETSC(VecGhostUpdateEnd(v, ADD_VALUES, SCATTER_REVERSE));
}

/// Counting sort by colour, stable: begin[k] = first slot of colour k (n_colors + 1 entries), slot[i] = the slot of
/// item i (items of one colour keep their order).
struct ColorSlots {
  std::vector<std::size_t> begin, slot;
};
ColorSlots color_slots(std::span<const std::int32_t> color, int n_colors) {
  ColorSlots out;
  out.begin.assign(static_cast<std::size_t>(n_colors) + 1, 0);
  for (const std::int32_t c : color) ++out.begin[static_cast<std::size_t>(c) + 1];
  std::partial_sum(out.begin.begin(), out.begin.end(), out.begin.begin());
  std::vector<std::size_t> next(out.begin.begin(), out.begin.end() - 1);
  out.slot.resize(color.size());
  for (std::size_t i = 0; i < color.size(); ++i) out.slot[i] = next[static_cast<std::size_t>(color[i])]++;
  return out;
}

/// The inverse of a symmetric positive definite 6 x 6 matrix (row-major), by Gauss-Jordan elimination.
std::array<double, 36> inverse6(std::array<double, 36> a) {
  std::array<double, 36> inv{};
  for (int i = 0; i < 6; ++i) inv[7 * i] = 1.0;
  for (int k = 0; k < 6; ++k) {
    const double p = 1.0 / a[7 * k];
    for (int j = 0; j < 6; ++j) a[6 * k + j] *= p, inv[6 * k + j] *= p;
    for (int i = 0; i < 6; ++i) {
      if (i == k) continue;
      const double f = a[6 * i + k];
      for (int j = 0; j < 6; ++j) a[6 * i + j] -= f * a[6 * k + j], inv[6 * i + j] -= f * inv[6 * k + j];
    }
  }
  return inv;
}

/// Whether any of the n vertices at v is shared with another rank (shared: per local vertex).
bool touches_shared(std::span<const std::uint8_t> shared, const LocalIndex* v, int n) {
  return std::any_of(v, v + n, [&](LocalIndex u) { return shared[static_cast<std::size_t>(u)] != 0; });
}

}  // namespace

PbdConstraints::PbdConstraints(MPI_Comm comm, const LocalMesh& mesh, const Model& model,
                               std::span<const double> bending_stiffness)
    : comm_(comm), n_owned_(mesh.n_owned), n_local_(mesh.n_local()) {
  MPI_Comm_size(comm, &size_);
  for (LocalIndex v = n_owned_; v < n_local_; ++v) ghost_ids_.push_back(static_cast<PetscInt>(mesh.global_vertex[v]));
  delta_ = create_vector();
  const std::vector<std::uint8_t> shared = find_shared_vertices();
  std::vector<std::int32_t> color;
  color = distributed_cell_colors(comm, mesh, model.nodes_per_cell, &n_colors_);
  run_collectively(comm, [&] {
    nodes_ = model.nodes_per_cell;
    if (nodes_ == 3)
      set_membrane_materials(model);
    else
      set_tet_materials(model);
    place_cells(mesh, model, color, shared);
  });
  n_cell_colors_ = n_colors_;
  // Bending stencils (membranes with `bending:`): coloured among themselves, after the cells. Every rank takes part
  // in the colouring when any material bends (the job is the same everywhere).
  const bool bends = model.nodes_per_cell == 3 && std::any_of(bending_stiffness.begin(), bending_stiffness.end(),
                                                              [](double kb) { return kb > 0.0; });
  if (bends) append_hinges(comm, mesh, model, bending_stiffness, shared);
  append_attachments(comm, mesh, model, shared);
  lambda_.assign(vertices_.size(), 0.0);
  set_inversion_handling(false);
  set_masses(model);
}

void PbdConstraints::set_membrane_materials(const Model& model) {
  // Membranes (Bender §4.3): the plane-stress StVK triangle of trbs (membrane_energy.hpp), or Volino's
  // weft/warp triangle (volino.hpp: isotropic, the paper's orthotropic law, or nonlinear curves).
  membrane_tables_ = model.materials.membrane;
  volino_tables_ = model.materials.volino;
  volino_stabilization_ = model.materials.volino_stabilization;
  for (std::size_t m = 0; m < model.material_model.size(); ++m) {
    const std::string_view name = model.material_model[m]->name;
    if (name != "trbs" && name != "volino")
      throw std::invalid_argument(
          "integrator position-based: membranes take model trbs (the plane-stress St. "
          "Venant-Kirchhoff triangle of Bender et al. §4.3) or volino (orthotropic), "
          "got model '" +
          std::string(name) + "'");
    volino_material_.push_back(name == "volino");
    if (name == "trbs") {
      const MembraneMaterial& mm = membrane_tables_[m];
      modulus_.push_back(mm.young / (1.0 - mm.poisson * mm.poisson));
      const double lambda = mm.young * mm.poisson / (1.0 - mm.poisson * mm.poisson);
      const double mu = mm.young / (2.0 * (1.0 + mm.poisson));
      const double a = lambda + 2.0 * mu, det = a * a - lambda * lambda;  // D = [a l 0; l a 0; 0 0 mu]
      tri_tangent_.push_back({a, lambda, 0.0, lambda, a, 0.0, 0.0, 0.0, mu});
      tri_compliance_.push_back({a / det, -lambda / det, 0.0, -lambda / det, a / det, 0.0, 0.0, 0.0, 1.0 / mu});
      continue;
    }
    tri_tangent_.push_back({}), tri_compliance_.push_back({});
    const VolinoMaterial& vm = volino_tables_[m];
    if (std::any_of(vm.viscosity.begin(), vm.viscosity.end(), [](double e) { return e != 0.0; }))
      throw std::invalid_argument("integrator position-based: materials[" + std::to_string(m) +
                                  "].viscosity: Volino's viscous stress is not an energy constraint (use "
                                  "analysis.position_based.velocity_damping)");
    // k: the largest diagonal entry of the law's tangent at zero strain (a stress: the energy density of the
    // constraint is ~ k eps^2, as for the trbs triangle's E / (1 - nu^2)).
    const double zero[3] = {0.0, 0.0, 0.0};
    double sigma[3], C[9];
    vm.law.evaluate(zero, sigma, C);
    modulus_.push_back(std::max({C[0], C[4], C[8]}));
  }
}

void PbdConstraints::set_tet_materials(const Model& model) {
  tables_ = model.materials.tet;
  for (std::size_t m = 0; m < tables_.size(); ++m) {
    const ModelInfo* info = model.material_model[m];
    if (info->element_energy == nullptr)
      throw std::invalid_argument("integrator position-based: model '" + std::string(info->name) +
                                  "' has no element energy");
    kernel_.push_back(info->element_energy);
    plain_kernel_.push_back(info->element_energy);
    inverted_kernel_.push_back(info->inverted_element_energy ? info->inverted_element_energy : info->element_energy);
    const double* D = tables_[m].D.data();
    modulus_.push_back(std::max({D[0], D[7], D[14]}));
    // The block projection's metric: the small-strain tangent of the element energy in Green-strain Voigt form (D,
    // plus the quadratic penalty's k_vol (tr eps)^2 / 2; the cubic one has no curvature at J = 1).
    std::array<double, 36> tangent = tables_[m].D;
    if (tables_[m].volumetric == VolumetricPenalty::quadratic)
      for (int p = 0; p < 3; ++p)
        for (int q = 0; q < 3; ++q) tangent[6 * p + q] += tables_[m].k_vol;
    tangent_.push_back(tangent);
    compliance_.push_back(inverse6(tangent));
  }
}

void PbdConstraints::place_cells(const LocalMesh& mesh, const Model& model, std::vector<std::int32_t>& color,
                                 std::span<const std::uint8_t> shared) {
  // Per colour the constraints touching a shared vertex come first (the interface), then the interior ones: the
  // sweep overlaps the interface's ghost exchange with the interior's projections. Sort key 2 colour + interior.
  const auto n_cells = static_cast<LocalIndex>(model.cell_material.size());
  const std::vector<LocalIndex>& cells = nodes_ == 4 ? mesh.mesh.tets : mesh.mesh.triangles;
  for (std::size_t t = 0; t < color.size(); ++t)
    color[t] = 2 * color[t] +
               (touches_shared(shared, cells.data() + static_cast<std::size_t>(nodes_) * t, nodes_) ? 0 : 1);
  const ColorSlots sorted = color_slots(color, 2 * n_colors_);
  for (int k = 0; k <= n_colors_; ++k) color_begin_.push_back(sorted.begin[2 * static_cast<std::size_t>(k)]);
  for (int k = 0; k < n_colors_; ++k) interior_begin_.push_back(sorted.begin[2 * static_cast<std::size_t>(k) + 1]);
  vertices_.resize(n_cells);
  if (nodes_ == 4)
    rest_.resize(n_cells);
  else
    tri_rest_.resize(n_cells);
  material_.resize(n_cells);
  slot_cell_.resize(n_cells);
  for (LocalIndex t = 0; t < n_cells; ++t) {  // ascending local index inside a colour
    const std::size_t c = sorted.slot[static_cast<std::size_t>(t)];
    double X[12];
    vertices_[c] = {0, 0, 0, -1};  // (triangles: 3 vertices)
    for (int a = 0; a < nodes_; ++a) {
      const LocalIndex v = cells[static_cast<std::size_t>(nodes_) * t + a];
      vertices_[c][a] = v;
      for (int k = 0; k < 3; ++k) X[3 * a + k] = mesh.mesh.coords[3 * v + k];
    }
    material_[c] = model.cell_material[t];
    slot_cell_[c] = t;
    if (nodes_ == 4) {
      rest_[c] = tet_rest(X, mesh.cell_global[t]);
    } else {
      tri_rest_[c] = tri_rest(X, mesh.cell_global[t]);
      if (volino_material_[static_cast<std::size_t>(material_[c])]) {
        if (volino_rest_.empty()) volino_rest_.resize(n_cells);
        volino_rest_[c] = volino_reference(std::span<const double, 9>(X, 9), volino_tables_[material_[c]].warp);
      }
    }
  }
  n_cells_ = static_cast<std::size_t>(n_cells);
}

std::vector<LocalIndex> PbdConstraints::collect_hinges(const LocalMesh& mesh, const Model& model,
                                                       std::span<const double> bending_stiffness) {
  if (!mesh.has_hinges)
    throw std::invalid_argument(
        "integrator position-based: bending needs the mesh's hinge stencils "
        "(distribute the mesh with hinges)");
  std::vector<LocalIndex> stencils;
  for (std::size_t h = 0; h < mesh.hinge_cell.size(); ++h) {
    const double kb = bending_stiffness[static_cast<std::size_t>(model.cell_material[mesh.hinge_cell[h]])];
    if (!(kb > 0.0)) continue;
    double X[12];
    std::array<LocalIndex, 4> v{};
    for (int a = 0; a < 4; ++a) {
      v[a] = mesh.hinges[4 * h + a];
      for (int k = 0; k < 3; ++k) X[3 * a + k] = mesh.mesh.coords[3 * v[a] + k];
    }
    stencils.insert(stencils.end(), v.begin(), v.end());
    hinge_k_.push_back(bending_weights(X, kb));
    hinge_kb_.push_back(kb);
    const double t0[9] = {X[0], X[1], X[2], X[3], X[4], X[5], X[6], X[7], X[8]};    // (x0, x1, x2)
    const double t1[9] = {X[0], X[1], X[2], X[3], X[4], X[5], X[9], X[10], X[11]};  // (x0, x1, x3)
    hinge_area_.push_back(tri_rest(t0, static_cast<std::int64_t>(h)).area +
                          tri_rest(t1, static_cast<std::int64_t>(h)).area);
  }
  return stencils;
}

void PbdConstraints::append_hinges(MPI_Comm comm, const LocalMesh& mesh, const Model& model,
                                   std::span<const double> bending_stiffness, std::span<const std::uint8_t> shared) {
  std::vector<LocalIndex> stencils;
  run_collectively(comm, [&] { stencils = collect_hinges(mesh, model, bending_stiffness); });
  int n_hinge_colors = 0;
  std::vector<std::int32_t> hinge_color = distributed_stencil_colors(comm, mesh, stencils, &n_hinge_colors);
  // Append the hinges sorted by colour, the interface first (ascending local order inside each part).
  const std::size_t n_hinges = hinge_k_.size();
  for (std::size_t h = 0; h < n_hinges; ++h)
    hinge_color[h] = 2 * hinge_color[h] + (touches_shared(shared, stencils.data() + 4 * h, 4) ? 0 : 1);
  // (Not a structured binding: clang before 16 cannot capture one in the lambda below.)
  const ColorSlots slots = color_slots(hinge_color, 2 * n_hinge_colors);
  const std::vector<std::size_t>& begin = slots.begin;
  const std::vector<std::size_t>& slot = slots.slot;
  auto permuted = [&](const auto& in) {
    std::remove_cvref_t<decltype(in)> out(in.size());
    for (std::size_t h = 0; h < n_hinges; ++h) out[slot[h]] = in[h];
    return out;
  };
  hinge_k_ = permuted(hinge_k_);
  hinge_kb_ = permuted(hinge_kb_);
  hinge_area_ = permuted(hinge_area_);
  vertices_.resize(n_cells_ + n_hinges);
  material_.resize(n_cells_ + n_hinges, -1);
  for (std::size_t h = 0; h < n_hinges; ++h)
    for (int a = 0; a < 4; ++a) vertices_[n_cells_ + slot[h]][a] = stencils[4 * h + a];
  for (int k = 1; k <= n_hinge_colors; ++k) color_begin_.push_back(n_cells_ + begin[2 * static_cast<std::size_t>(k)]);
  for (int k = 0; k < n_hinge_colors; ++k)
    interior_begin_.push_back(n_cells_ + begin[2 * static_cast<std::size_t>(k) + 1]);
  n_colors_ += n_hinge_colors;
}

void PbdConstraints::set_masses(const Model& model) {
  // Masses, prescribed dofs and cell counts, summed over the ranks through delta_.
  const std::size_t n_dofs = 3 * static_cast<std::size_t>(n_local_);
  auto summed = [&](const std::vector<double>& partial) {  // summed over ranks, ghosts up to date
    {
      LocalForm d(delta_, false);
      std::copy(partial.begin(), partial.end(), d.span().begin());
    }
    reverse_add(delta_);
    forward(delta_);
    LocalForm d(delta_, true);
    return std::vector<double>(d.span().begin(), d.span().end());
  };
  std::vector<double> partial(n_dofs, 0.0);
  for (std::size_t v = 0; v < model.lumped_mass.size(); ++v)
    for (int k = 0; k < 3; ++k) partial[3 * v + k] = model.lumped_mass[v];
  const std::vector<double> mass = summed(partial);
  std::fill(partial.begin(), partial.end(), 0.0);
  for (const DirichletDof& d : model.dirichlet) partial[static_cast<std::size_t>(d.dof)] = 1.0;
  const std::vector<double> prescribed = summed(partial);
  w_.assign(n_dofs, 0.0);
  for (std::size_t i = 0; i < n_dofs; ++i) w_[i] = prescribed[i] != 0.0 || !(mass[i] > 0.0) ? 0.0 : 1.0 / mass[i];
  uniform_.assign(nodes_ == 4 ? n_cells_ : 0, 1);
  for (std::size_t c = 0; c < uniform_.size(); ++c)
    for (int a = 0; a < 4; ++a) {
      const double* wa = w_.data() + 3 * static_cast<std::size_t>(vertices_[c][a]);
      if (wa[0] != wa[1] || wa[1] != wa[2]) uniform_[c] = 0;
    }
  std::fill(partial.begin(), partial.end(), 0.0);
  for (std::size_t c = 0; c < vertices_.size(); ++c)
    for (int a = 0; a < (c < n_cells_ ? nodes_ : c < anchor_begin_ ? 4 : 1); ++a)
      partial[3 * static_cast<std::size_t>(vertices_[c][a])] += 1.0;
  const std::vector<double> count = summed(partial);
  cell_count_.resize(n_local_);
  for (LocalIndex v = 0; v < n_local_; ++v) cell_count_[v] = std::max(1.0, count[3 * static_cast<std::size_t>(v)]);
  {
    LocalForm d(delta_, false);  // the sweeps start from zero changes
    std::fill(d.span().begin(), d.span().end(), 0.0);
  }
  change_.assign(n_dofs, 0.0);
}

std::vector<std::uint8_t> PbdConstraints::find_shared_vertices() {
  // The owned vertices other ranks hold as ghosts: a reverse sum of ones from every ghost copy (through delta_).
  {
    LocalForm d(delta_, false);
    std::fill(d.span().begin() + 3 * static_cast<std::ptrdiff_t>(n_owned_), d.span().end(), 1.0);
  }
  reverse_add(delta_);
  std::vector<std::uint8_t> shared(static_cast<std::size_t>(n_local_), 1);  // ghosts and shared owned vertices
  LocalForm d(delta_, false);
  for (LocalIndex v = 0; v < n_owned_; ++v) {
    shared[v] = d.span()[3 * static_cast<std::size_t>(v)] != 0.0;
    if (shared[v]) shared_owned_.push_back(v);
  }
  std::fill(d.span().begin(), d.span().end(), 0.0);
  return shared;
}

void PbdConstraints::append_attachments(MPI_Comm comm, const LocalMesh& mesh, const Model& model,
                                        std::span<const std::uint8_t> shared) {
  // One constraint per attached owned vertex, one colour per job.attachments entry (a vertex is in an entry once;
  // its owner projects it), after the cells and hinges on every rank.
  anchor_begin_ = vertices_.size();
  n_anchor_colors_ = static_cast<int>(model.attachments.size());
  {  // the rest test's scale: the squared diagonal of the global bounding box
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (std::size_t i = 0; i < mesh.mesh.coords.size(); ++i)
      lo[i % 3] = std::min(lo[i % 3], mesh.mesh.coords[i]), hi[i % 3] = std::max(hi[i % 3], mesh.mesh.coords[i]);
    double extent[6] = {-lo[0], -lo[1], -lo[2], hi[0], hi[1], hi[2]}, global[6];
    MPI_Allreduce(extent, global, 6, MPI_DOUBLE, MPI_MAX, comm);
    anchor_scale_ = 0.0;
    for (int d = 0; d < 3; ++d) anchor_scale_ += (global[3 + d] + global[d]) * (global[3 + d] + global[d]);
  }
  auto is_shared = [&](LocalIndex v) { return shared[static_cast<std::size_t>(v)] != 0; };
  for (const Attachment& a : model.attachments) {
    std::vector<LocalIndex> attached = a.vertices;
    std::sort(attached.begin(), attached.end());
    attached.erase(std::unique(attached.begin(), attached.end()), attached.end());
    // Shared vertices first (the colour's interface), then the others, each part in ascending local order.
    const auto interior = std::stable_partition(attached.begin(), attached.end(), is_shared);
    const std::size_t first = vertices_.size();
    for (const LocalIndex v : attached) {
      vertices_.push_back({v, -1, -1, -1});
      material_.push_back(-1);
      anchor_spec_.push_back(static_cast<std::int32_t>(anchor_specs_.size()));
      anchor_k_.push_back(a.spec.stiffness);
      for (int q = 0; q < 3; ++q) anchor_reference_.push_back(mesh.mesh.coords[3 * static_cast<std::size_t>(v) + q]);
    }
    interior_begin_.push_back(first + static_cast<std::size_t>(interior - attached.begin()));
    color_begin_.push_back(vertices_.size());
    anchor_specs_.push_back(a.spec);
  }
  n_colors_ += n_anchor_colors_;
  anchor_target_ = anchor_reference_;
}

PetscOwner<Vec, VecDestroy> PbdConstraints::create_vector() const {
  // The layout of Assembler::create_vector: block size 3, owned vertices then ghosts in LocalMesh order.
  PetscOwner<Vec, VecDestroy> v;
  EDGEFEM_PETSC(VecCreateGhostBlock(comm_, 3, 3 * static_cast<PetscInt>(n_owned_), PETSC_DECIDE,
                                    static_cast<PetscInt>(ghost_ids_.size()), ghost_ids_.data(), v.address()));
  EDGEFEM_PETSC(VecSet(v, 0.0));
  return v;
}

void PbdConstraints::set_inversion_handling(bool on) {
  inversion_ = on;
  kernel_ = on ? inverted_kernel_ : plain_kernel_;
  batchable_.assign(kernel_.size(), 0);
  for (std::size_t m = 0; m < kernel_.size(); ++m)
    batchable_[m] = tables_[m].isotropic &&
                    kernel_[m] == (on ? &stvk_inversion_energy_gradient : &stvk_element_energy_gradient) &&
                    !(m < plastic_material_.size() && plastic_material_[m] != 0);  // plastic: project's own kernel
}

std::int64_t PbdConstraints::count_inverted(Vec x) const {
  std::int64_t local = 0;
  {
    LocalForm xl(x, true);
    const double* xp = xl.span().data();
    for (std::size_t c = 0; c < rest_.size(); ++c) {  // (tets only: membranes have no rest_)
      double xe[12], F[9];
      for (int a = 0; a < 4; ++a)
        for (int k = 0; k < 3; ++k) xe[3 * a + k] = xp[3 * vertices_[c][a] + k];
      deformation_gradient(rest_[c], xe, F);
      const double det = F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) +
                         F[2] * (F[3] * F[7] - F[4] * F[6]);
      if (!(det > 0.0)) ++local;
    }
  }
  std::int64_t total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_INT64_T, MPI_SUM, comm_);
  return total;
}

void PbdConstraints::set_anchor_time(double t) {
  for (std::size_t h = 0; h < anchor_k_.size(); ++h) {
    const std::array<double, 3> d = anchor_specs_[static_cast<std::size_t>(anchor_spec_[h])].displacement(t);
    for (int q = 0; q < 3; ++q) anchor_target_[3 * h + q] = anchor_reference_[3 * h + q] + d[q];
  }
}

void PbdConstraints::set_plasticity(std::span<const std::optional<PlasticLaw>> laws) {
  plastic_law_.assign(tables_.size(), PlasticLaw{});
  plastic_material_.assign(tables_.size(), 0);
  bool any = false;
  for (std::size_t m = 0; m < laws.size() && m < tables_.size(); ++m)
    if (laws[m]) {
      if (!tables_[m].isotropic)
        throw std::invalid_argument("plasticity: material entry " + std::to_string(m) + " is not isotropic");
      plastic_law_[m] = *laws[m], plastic_material_[m] = 1, any = true;
      if (m < batchable_.size()) batchable_[m] = 0;  // the plastic kernel is scalar (project)
    }
  plastic_.assign(any ? 6 * n_cells_ : 0, 0.0);
}

void PbdConstraints::update_plasticity(Vec x, double dt) {
  if (plastic_.empty()) return;
  LocalForm xl(x, true);
  const double* xp = xl.span().data();
  const auto n = static_cast<std::int64_t>(n_cells_);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const auto c = static_cast<std::size_t>(i);
    const std::int32_t m = material_[c];
    if (plastic_material_[m] == 0) continue;
    double xe[12];
    for (int a = 0; a < 4; ++a)
      for (int k = 0; k < 3; ++k) xe[3 * a + k] = xp[3 * vertices_[c][a] + k];
    (void)plastic_update(rest_[c], xe, plastic_law_[m], dt, plastic_.data() + 6 * c);
  }
}

std::vector<double> PbdConstraints::plastic_strain() const {
  std::vector<double> out(plastic_.size());
  for (std::size_t c = 0; c < n_cells_ && !plastic_.empty(); ++c)
    std::copy_n(plastic_.data() + 6 * c, 6, out.data() + 6 * static_cast<std::size_t>(slot_cell_[c]));
  return out;
}

void PbdConstraints::set_plastic_strain(std::span<const double> local_cell_order) {
  if (local_cell_order.size() != plastic_.size())
    throw std::invalid_argument("plastic strain: " + std::to_string(local_cell_order.size()) + " values, expected " +
                                std::to_string(plastic_.size()) + " (6 per tet of this rank)");
  for (std::size_t c = 0; c < n_cells_ && !plastic_.empty(); ++c)
    std::copy_n(local_cell_order.data() + 6 * static_cast<std::size_t>(slot_cell_[c]), 6, plastic_.data() + 6 * c);
}

double PbdConstraints::max_plastic_strain() const {
  double local = 0.0;
  for (std::size_t c = 0; c < plastic_.size() / 6; ++c) local = std::max(local, strain_norm(plastic_.data() + 6 * c));
  double global = 0.0;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_MAX, comm_);
  return global;
}

void PbdConstraints::reset_multipliers() {
  std::fill(lambda_.begin(), lambda_.end(), 0.0);
  if (xpbd_) contribution_.assign(12 * lambda_.size(), 0.0);
}

std::size_t PbdConstraints::bytes() const {
  return vertices_.size() * sizeof(vertices_[0]) + rest_.size() * sizeof(TetRest) + tri_rest_.size() * sizeof(TriRest) +
         volino_rest_.size() * sizeof(VolinoTriangle) + hinge_k_.size() * (sizeof(hinge_k_[0]) + 2 * sizeof(double)) +
         material_.size() * sizeof(std::int32_t) + lambda_.size() * sizeof(double) +
         contribution_.size() * sizeof(double) + plastic_.size() * sizeof(double) +
         slot_cell_.size() * sizeof(LocalIndex);
}

template <int N, PbdConstraints::Stencil kStencil, bool kJacobi>
void PbdConstraints::project(std::size_t c, double* x, double* ghost_change, double* change) {
  constexpr int n = 3 * N;  // dofs of the constraint
  const std::array<LocalIndex, 4>& v = vertices_[c];
  double xe[n], g[n], w[n];
  for (int a = 0; a < N; ++a)
    for (int k = 0; k < 3; ++k) {
      xe[3 * a + k] = x[3 * v[a] + k];
      w[3 * a + k] = w_[3 * v[a] + k];
    }
  if constexpr (kStencil == Stencil::hinge && !kJacobi) {  // (no energy needed)
    if (xpbd_ && !fixed_lambda_) return hinge_project(c, xe, w, x, ghost_change);
  }
  const std::int32_t m = material_[c];
  double energy = 0.0, volume = 0.0, k = 0.0;
  if constexpr (kStencil == Stencil::anchor) {
    // A penalty attachment: E = k |x - a|^2 / 2 on one vertex, g = k (x - a); the rest test's scale is the square
    // of the mesh's bounding-box diagonal.
    const std::size_t h = c - anchor_begin_;
    k = anchor_k_[h];
    for (int q = 0; q < 3; ++q) {
      const double s = xe[q] - anchor_target_[3 * h + q];
      g[q] = k * s;
      energy += 0.5 * k * s * s;
    }
    volume = anchor_scale_;
  } else if constexpr (kStencil == Stencil::hinge) {
    const std::size_t h = c - n_cells_;
    energy = bending_energy_gradient(hinge_k_[h], xe, g);
    volume = hinge_area_[h];
    k = hinge_kb_[h];
  } else if constexpr (N == 4) {
    energy = tet_energy(c, xe, g);
    volume = rest_[c].v0;
    k = modulus_[m];
  } else if (volino_material_[static_cast<std::size_t>(m)]) {
    VolinoElement element;
    volino_element(volino_rest_[c], volino_tables_[m], std::span<const double, 9>(xe, 9), volino_stabilization_, false,
                   element);
    energy = element.energy;
    std::copy(element.f.begin(), element.f.end(), g);  // f = +dW/dx
    volume = volino_rest_[c].area * volino_tables_[m].thickness;
    k = modulus_[m];
  } else {
    energy = trbs_element_energy_gradient(tri_rest_[c], xe, membrane_tables_[m], g);
    volume = tri_rest_[c].area * membrane_tables_[m].thickness;
    k = modulus_[m];
  }
  if constexpr (N == 4 && kStencil == Stencil::cell && !kJacobi) {
    if (xpbd_ && !fixed_lambda_) return block_project(c, xe, w, g, energy, x, ghost_change);
  }
  if constexpr (N == 3 && kStencil == Stencil::cell && !kJacobi) {
    if (xpbd_ && !fixed_lambda_ && volino_material_[static_cast<std::size_t>(m)] == 0)
      return block_project(c, xe, w, g, energy, x, ghost_change);
  }
  correct<N, kJacobi>(c, w, g, energy, volume, k, x, ghost_change, change);
}

double PbdConstraints::tet_energy(std::size_t c, const double* xe, double* g) const {
  const std::int32_t m = material_[c];
  if (!plastic_.empty() && plastic_material_[m] != 0)  // plasticity: its own kernel
    return stvk_plastic_energy_gradient(rest_[c], xe, tables_[m], plastic_.data() + 6 * c, g);
  const ElementEnergyGradient kernel = kernel_[m];
  return kernel == &stvk_element_energy_gradient  // the same, inlined
             ? stvk_energy_gradient_inline(rest_[c], xe, tables_[m], g)
             : kernel == &stvk_inversion_energy_gradient
                   ? stvk_energy_gradient_inline<true>(rest_[c], xe, tables_[m], g)
                   : kernel(rest_[c], xe, tables_[m], g);
}

void PbdConstraints::block_project(std::size_t c, const double* xe, const double* w, const double* g, double energy,
                                   double* x, double* ghost_change) {
  double* s = contribution_.data() + 12 * c;
  const double dt2 = dt_ * dt_;
  double res[12], check = 0.0;
  for (int i = 0; i < 3 * nodes_; ++i) res[i] = s[i] + dt2 * g[i], check += res[i] * 0.0;
  if (check != 0.0) return;  // (NaN) a failed energy evaluation: leave the cell as it is
  double ds[12];
  const double change = nodes_ == 4 ? block_direction(c, xe, w, g, res, ds) : tri_block_direction(c, xe, w, res, ds);
  const double theta = change > kCheckedChange ? step_length(c, xe, w, res, ds, energy) : 1.0;
  if (theta == 0.0) return;
  const std::array<LocalIndex, 4>& v = vertices_[c];
  for (int a = 0; a < nodes_; ++a)
    for (int r = 0; r < 3; ++r) {
      const int i = 3 * a + r;
      s[i] += theta * ds[i];
      const double dx = w[i] * (theta * ds[i]);
      const std::size_t d = 3 * static_cast<std::size_t>(v[a]) + r;
      x[d] += dx;
      if (v[a] >= n_owned_) ghost_change[d] = dx;
    }
}

double PbdConstraints::tri_block_direction(std::size_t c, const double* xe, const double* w, const double* res,
                                           double* ds) const {
  const TriRest& rest = tri_rest_[c];
  const auto m = static_cast<std::size_t>(material_[c]);
  const double al[3][2] = {{-rest.alpha[0][0] - rest.alpha[1][0], -rest.alpha[0][1] - rest.alpha[1][1]},
                           {rest.alpha[0][0], rest.alpha[0][1]},
                           {rest.alpha[1][0], rest.alpha[1][1]}};
  double F[6];  // 3 x 2, row-major
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 2; ++j) F[2 * r + j] = (xe[3 + r] - xe[r]) * al[1][j] + (xe[6 + r] - xe[r]) * al[2][j];
  tri_block_step(al, F, w, res, tri_compliance_[m].data(), tri_tangent_[m].data(),
                 rest.area * membrane_tables_[m].thickness, dt_ * dt_, ds);
  return gradient_change(w, ds, al);
}

void PbdConstraints::hinge_project(std::size_t c, const double* xe, const double* w, double* x, double* ghost_change) {
  double* s = contribution_.data() + 12 * c;
  const std::array<double, 4>& k = hinge_k_[c - n_cells_];
  const double dt2 = dt_ * dt_;
  const std::array<LocalIndex, 4>& v = vertices_[c];
  for (int q = 0; q < 3; ++q) {
    double hy = 0.0, weight = 1.0;
    for (int i = 0; i < 4; ++i)
      hy += k[i] * (xe[3 * i + q] - w[3 * i + q] * s[3 * i + q]), weight += dt2 * w[3 * i + q] * k[i] * k[i];
    const double h = hy / weight;
    for (int i = 0; i < 4; ++i) {
      const double s_new = -dt2 * k[i] * h;
      const double dx = w[3 * i + q] * (s_new - s[3 * i + q]);
      s[3 * i + q] = s_new;
      const std::size_t d = 3 * static_cast<std::size_t>(v[i]) + q;
      x[d] += dx;
      if (v[i] >= n_owned_) ghost_change[d] = dx;
    }
  }
}

double PbdConstraints::cell_energy(std::size_t c, const double* xe, double* g) const {
  if (nodes_ == 4) return tet_energy(c, xe, g);
  return trbs_element_energy_gradient(tri_rest_[c], xe, membrane_tables_[static_cast<std::size_t>(material_[c])], g);
}

double PbdConstraints::stress_bound(std::size_t c, const double* F, const double* g) const {
  const auto m = static_cast<std::size_t>(material_[c]);
  const bool plastic = !plastic_.empty() && plastic_material_[m] != 0;
  const double J = F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) +
                   F[2] * (F[3] * F[7] - F[4] * F[6]);
  double S[6];
  if (plain_kernel_[m] != &stvk_element_energy_gradient && std::abs(J) > 1e-6)  // neo-Hookean: from P
    second_piola_from_gradient(rest_[c], F, g, S);
  else  // StVK (its plain stress also on the principal route), or a flat tet
    stvk_second_piola(tables_[m], F, plastic ? plastic_.data() + 6 * c : nullptr, S);
  return spectral_bound(S);
}

double PbdConstraints::block_direction(std::size_t c, const double* xe, const double* w, const double* g,
                                       const double* res, double* ds) const {
  const TetRest& rest = rest_[c];
  const auto m = static_cast<std::size_t>(material_[c]);
  double al[4][3], F[9];
  tet_alphas(rest, al);
  deformation_gradient(rest, xe, F);
  const double bound = stress_bound(c, F, g);
  if (!uniform_[c]) {
    block_step_general(al, F, w, res, bound, tangent_[m].data(), rest.v0, dt_ * dt_, ds);
    return gradient_change(w, ds, al);
  }
  BlockBatch<1> b;
  for (int i = 0; i < 12; ++i) b.x[i][0] = xe[i], b.res[i][0] = res[i];
  for (int a = 0; a < 3; ++a)
    for (int q = 0; q < 3; ++q) b.alpha[3 * a + q][0] = rest.alpha[a][q];
  for (int a = 0; a < 4; ++a) b.w[a][0] = w[3 * a];
  b.bound[0] = bound;
  for (int p = 0, e = 0; p < 6; ++p)
    for (int q = 0; q <= p; ++q, ++e) b.ci[e][0] = compliance_[m][6 * p + q];
  b.c[0] = dt_ * dt_ * rest.v0;
  block_step_one(b);
  for (int i = 0; i < 12; ++i) ds[i] = b.ds[i][0];
  return b.change[0];
}

double PbdConstraints::step_length(std::size_t c, const double* xe, const double* w, const double* res,
                                   const double* ds, double energy) const {
  // The cell's local objective phi(s) = s^T W s / (2 dt^2) + E_e(y + W s) along s + theta ds: halve theta until it
  // decreases enough (Armijo, with phi's slope res^T W ds / dt^2 < 0: H is positive definite).
  const double* s = contribution_.data() + 12 * c;
  const double dt2 = dt_ * dt_;
  const int n = 3 * nodes_;
  double phi0 = energy, slope = 0.0;
  for (int i = 0; i < n; ++i) phi0 += 0.5 * w[i] * s[i] * s[i] / dt2, slope += w[i] * res[i] * ds[i] / dt2;
  double theta = 1.0;
  for (int k = 0; k < kMaxHalvings; ++k, theta *= 0.5) {
    double xt[12], g[12], phi = 0.0;
    for (int i = 0; i < n; ++i) {
      const double st = s[i] + theta * ds[i];
      xt[i] = xe[i] + w[i] * (theta * ds[i]);
      phi += 0.5 * w[i] * st * st / dt2;
    }
    phi += cell_energy(c, xt, g);
    if (phi <= phi0 + 1e-4 * theta * slope) return theta;  // (false for NaN)
  }
  return 0.0;
}

template <int N, bool kJacobi>
void PbdConstraints::correct(std::size_t c, const double* w, const double* g, double energy, double volume, double k,
                             double* x, double* ghost_change, double* change) {
  constexpr int n = 3 * N;
  const std::array<LocalIndex, 4>& v = vertices_[c];
  double scale = 0.0;  // dx_i = scale * w_i * g_i
  if (fixed_lambda_) {
    scale = *fixed_lambda_;
  } else {
    double wg2 = 0.0;
    for (int i = 0; i < n; ++i) wg2 += w[i] * g[i] * g[i];
    if (!(energy > kRestDensity * k * volume) || !(wg2 > 0.0)) {
      // At rest: the element's force -dt^2 g is zero, so is its share of x - x* (consistent XPBD).
      if (xpbd_ && !kJacobi) {
        double* s = contribution_.data() + 12 * c;
        for (int a = 0; a < N; ++a)
          for (int q = 0; q < 3; ++q) {
            const std::size_t d = 3 * static_cast<std::size_t>(v[a]) + q;
            const double dx = -w[3 * a + q] * s[3 * a + q];
            s[3 * a + q] = 0.0;
            x[d] += dx;
            if (v[a] >= n_owned_) ghost_change[d] = dx;
          }
      }
      return;
    }
    if (xpbd_ && !kJacobi) {
      // Consistent XPBD: the element's share of x - x* is kept as s_e = grad C_e lambda_e (force units, in
      // contribution_); each projection replaces it by grad C(x) lambda' with lambda' from the linearised
      // C(x') + alpha~ lambda' = 0, x' = x + w (grad C lambda' - s_e):
      //   lambda' = (-C + sum w grad C . s_e) / (sum w |grad C|^2 + alpha~).
      // Its fixed point is x = x* + M^-1 sum_e grad C_e lambda_e with lambda_e = -C_e/alpha~, i.e. M (x - x*)/dt^2
      // + dE/dx = 0: the backward-Euler step (plain XPBD adds grad C lambda increments taken at different x,
      // which for C = sqrt(2E/k) stalls a few per cent away from it).
      double* s = contribution_.data() + 12 * c;
      const double constraint = std::sqrt(2.0 * energy / k);
      const double alpha = 1.0 / (k * dt_ * dt_);
      const double to_grad = 1.0 / (k * constraint);  // grad C = to_grad * g
      double ws = 0.0;
      for (int i = 0; i < n; ++i) ws += w[i] * g[i] * s[i];
      const double lambda = (-constraint + to_grad * ws) / (wg2 * to_grad * to_grad + alpha);
      lambda_[c] = lambda;
      for (int a = 0; a < N; ++a)
        for (int q = 0; q < 3; ++q) {
          const int i = 3 * a + q;
          const double s_new = to_grad * lambda * g[i];
          const double dx = w[i] * (s_new - s[i]);
          s[i] = s_new;
          const std::size_t d = 3 * static_cast<std::size_t>(v[a]) + q;
          x[d] += dx;
          if (v[a] >= n_owned_) ghost_change[d] = dx;
        }
      return;
    }
    if (xpbd_) {
      // Jacobi: plain XPBD (Macklin et al. 2016) on C = sqrt(2E/k), grad C = g / (k C),
      // sum w |grad C|^2 = wg2 / (2 E k).
      const double constraint = std::sqrt(2.0 * energy / k);
      const double alpha = 1.0 / (k * dt_ * dt_);
      const double dlambda = (-constraint - alpha * lambda_[c]) / (wg2 / (2.0 * energy * k) + alpha);
      lambda_[c] += dlambda;
      scale = dlambda / (k * constraint);
    } else {
      scale = -energy / wg2;
    }
  }
  for (int a = 0; a < N; ++a)
    for (int k = 0; k < 3; ++k) {
      const std::size_t d = 3 * static_cast<std::size_t>(v[a]) + k;
      const double dx = scale * w[3 * a + k] * g[3 * a + k];
      if constexpr (kJacobi) {
        change[d] += dx;
      } else {
        x[d] += dx;
        if (v[a] >= n_owned_) ghost_change[d] = dx;
      }
    }
}

template <bool kJacobi, bool kInversion>
void PbdConstraints::project_tets_batched(std::size_t begin, std::size_t end, double* x, double* ghost_change,
                                          double* change) {
  const std::int64_t n_batches = static_cast<std::int64_t>((end - begin + kLanes - 1) / kLanes);
  // The coloured sweep's plain PBD update and XPBD block projection are also computed lane by lane
  // (lane_corrections, block_lanes); Jacobi and the fixed multiplier of Appendix A go through correct().
  const bool lane_updates = !kJacobi && !fixed_lambda_;
#pragma omp parallel for schedule(static)
  for (std::int64_t b = 0; b < n_batches; ++b) {
    const std::size_t first = begin + static_cast<std::size_t>(b) * kLanes;
    const int count = static_cast<int>(std::min<std::size_t>(kLanes, end - first));
    TetLanes in;
    Lanes w[12];
    double modulus[kLanes];
    bool batched[kLanes];
    for (int l = 0; l < kLanes; ++l) {
      const std::size_t c = first + static_cast<std::size_t>(l < count ? l : 0);  // spare lanes: copies of lane 0
      const std::array<LocalIndex, 4>& v = vertices_[c];
      for (int a = 0; a < 4; ++a)
        for (int q = 0; q < 3; ++q) {
          in.x[3 * a + q][l] = x[3 * v[a] + q];
          w[3 * a + q][l] = w_[3 * v[a] + q];
        }
      const TetRest& rest = rest_[c];
      for (int a = 0; a < 3; ++a)
        for (int q = 0; q < 3; ++q) in.alpha[3 * a + q][l] = rest.alpha[a][q];
      in.v0[l] = rest.v0;
      const std::int32_t m = material_[c];
      batched[l] = batchable_[static_cast<std::size_t>(m)] != 0;
      const TetMaterial& material = tables_[m];
      in.mu[l] = material.mu, in.lambda[l] = material.lambda;
      in.k_vol[l] = material.volumetric == VolumetricPenalty::none ? 0.0 : material.k_vol;
      in.cubic[l] = material.volumetric == VolumetricPenalty::cubic ? 1.0 : 0.0;
      modulus[l] = modulus_[m];
    }
    Lanes gradient[12] = {}, energy = {}, bound = {};
    std::int64_t principal[kLanes] = {};
    const bool blocks = lane_updates && xpbd_;  // the block projection (needs the stress bound)
    if (std::any_of(batched, batched + kLanes, [](bool b) { return b; }))  // (else every lane is scalar)
      stvk_isotropic_batch(in, kInversion, gradient, energy, principal, blocks ? &bound : nullptr);
    bool scalar[kLanes];  // another law, or the principal route: the scalar kernel
    for (int l = 0; l < kLanes; ++l) scalar[l] = !batched[l] || principal[l] != 0;
    if (blocks) {
      block_lanes(first, count, in, w, gradient, bound, scalar, x, ghost_change);
      continue;
    }
    Lanes dx[12];
    if (lane_updates) lane_corrections(in.v0, modulus, w, gradient, energy, dx);
    for (int l = 0; l < count; ++l) {
      const std::size_t c = first + static_cast<std::size_t>(l);
      if (scalar[l]) {
        project<4, Stencil::cell, kJacobi>(c, x, ghost_change, change);
        continue;
      }
      if (!lane_updates) {
        double g[12], wl[12];
        for (int i = 0; i < 12; ++i) g[i] = gradient[i][l], wl[i] = w[i][l];
        correct<4, kJacobi>(c, wl, g, energy[l], in.v0[l], modulus[l], x, ghost_change, change);
        continue;
      }
      const std::array<LocalIndex, 4>& v = vertices_[c];
      for (int a = 0; a < 4; ++a)
        for (int q = 0; q < 3; ++q) {
          const std::size_t d = 3 * static_cast<std::size_t>(v[a]) + q;
          x[d] += dx[3 * a + q][l];
          if (v[a] >= n_owned_) ghost_change[d] = dx[3 * a + q][l];
        }
    }
  }
}

void PbdConstraints::lane_corrections(const Lanes& volume, const Lanes& modulus, const Lanes (&w)[12],
                                      const Lanes (&g)[12], const Lanes& energy, Lanes (&dx)[12]) {
  // correct<4, false> (plain PBD) for kLanes tets at once, the same arithmetic per lane (each statement a loop over
  // the lanes).
  Lanes wg2{}, scale;
  for (int i = 0; i < 12; ++i)
    for (int l = 0; l < kLanes; ++l) wg2[l] += w[i][l] * g[i][l] * g[i][l];
  for (int l = 0; l < kLanes; ++l)
    scale[l] = !(energy[l] > kRestDensity * modulus[l] * volume[l]) || !(wg2[l] > 0.0) ? 0.0 : -energy[l] / wg2[l];
  for (int i = 0; i < 12; ++i)
    for (int l = 0; l < kLanes; ++l) dx[i][l] = scale[l] * w[i][l] * g[i][l];
}

void PbdConstraints::block_lanes(std::size_t first, int count, const TetLanes& in, const Lanes (&w)[12],
                                 const Lanes (&g)[12], const Lanes& bound, const bool* scalar, double* x,
                                 double* ghost_change) {
  // Lanes of another kernel (plastic, anisotropic, neo-Hookean, the principal route): their energy gradient and
  // stress bound from the scalar kernel, then the same lanes step. A tet with a partly prescribed vertex goes through
  // project (the 12 x 12 step).
  Lanes gl[12], bl;
  bool own[kLanes] = {};  // the lane's tet goes through project
  std::copy(&g[0][0], &g[0][0] + 12 * kLanes, &gl[0][0]);
  std::copy(bound, bound + kLanes, bl);
  for (int l = 0; l < count; ++l) {
    const std::size_t c = first + static_cast<std::size_t>(l);
    own[l] = !uniform_[c];
    if (own[l] || !scalar[l]) continue;
    double xe[12], ge[12], F[9];
    for (int i = 0; i < 12; ++i) xe[i] = in.x[i][l];
    tet_energy(c, xe, ge);
    for (int i = 0; i < 12; ++i) gl[i][l] = ge[i];
    deformation_gradient(rest_[c], xe, F);
    bl[l] = stress_bound(c, F, ge);
  }
  BlockBatch<kLanes> io;
  if (!std::all_of(own, own + count, [](bool o) { return o; })) {
    fill_block_batch(first, count, in, gl, io);
    std::copy(bl, bl + kLanes, io.bound);
    block_step_lanes(io);
  }
  for (int l = 0; l < count; ++l) {
    const std::size_t c = first + static_cast<std::size_t>(l);
    // The scalar route (project): a partly prescribed vertex, a large step (checked there) or a failed evaluation
    // (NaN: left as it is there).
    if (own[l] || !(io.change[l] <= kCheckedChange)) {
      project<4, Stencil::cell, false>(c, x, ghost_change, nullptr);
      continue;
    }
    apply_block_step(c, w, io, l, x, ghost_change);
  }
}

void PbdConstraints::apply_block_step(std::size_t c, const Lanes (&w)[12], const BlockBatch<kLanes>& io, int l,
                                      double* x, double* ghost_change) {
  double* share = contribution_.data() + 12 * c;
  const std::array<LocalIndex, 4>& v = vertices_[c];
  for (int a = 0; a < 4; ++a)
    for (int q = 0; q < 3; ++q) {
      const int i = 3 * a + q;
      share[i] += io.ds[i][l];
      const double dx = w[i][l] * io.ds[i][l];
      const std::size_t d = 3 * static_cast<std::size_t>(v[a]) + q;
      x[d] += dx;
      if (v[a] >= n_owned_) ghost_change[d] = dx;
    }
}

void PbdConstraints::fill_block_batch(std::size_t first, int count, const TetLanes& in, const Lanes (&g)[12],
                                      BlockBatch<kLanes>& io) const {
  const double dt2 = dt_ * dt_;
  for (int l = 0; l < kLanes; ++l) {  // spare lanes: copies of lane 0
    const std::size_t c = first + static_cast<std::size_t>(l < count ? l : 0);
    const double* share = contribution_.data() + 12 * c;
    const auto m = static_cast<std::size_t>(material_[c]);
    for (int i = 0; i < 12; ++i) io.x[i][l] = in.x[i][l], io.res[i][l] = share[i] + dt2 * g[i][l];
    for (int i = 0; i < 9; ++i) io.alpha[i][l] = in.alpha[i][l];
    for (int a = 0; a < 4; ++a) io.w[a][l] = w_[3 * static_cast<std::size_t>(vertices_[c][a])];
    for (int p = 0, e = 0; p < 6; ++p)
      for (int q = 0; q <= p; ++q, ++e) io.ci[e][l] = compliance_[m][6 * p + q];
    io.c[l] = dt2 * in.v0[l];
  }
}

template <bool kJacobi>
void PbdConstraints::project_range(int color, std::size_t first, std::size_t last, double* x, double* ghost_change,
                                   double* change) {
  const auto begin = static_cast<std::int64_t>(first), end = static_cast<std::int64_t>(last);
  if (color >= n_colors_ - n_anchor_colors_) {
#pragma omp parallel for schedule(static)
    for (std::int64_t c = begin; c < end; ++c)
      project<1, Stencil::anchor, kJacobi>(static_cast<std::size_t>(c), x, ghost_change, change);
  } else if (color >= n_cell_colors_) {
#pragma omp parallel for schedule(static)
    for (std::int64_t c = begin; c < end; ++c)
      project<4, Stencil::hinge, kJacobi>(static_cast<std::size_t>(c), x, ghost_change, change);
  } else if (nodes_ == 4) {
    if (inversion_)
      project_tets_batched<kJacobi, true>(first, last, x, ghost_change, change);
    else
      project_tets_batched<kJacobi, false>(first, last, x, ghost_change, change);
  } else {
#pragma omp parallel for schedule(static)
    for (std::int64_t c = begin; c < end; ++c)
      project<3, Stencil::cell, kJacobi>(static_cast<std::size_t>(c), x, ghost_change, change);
  }
}

void PbdConstraints::add_into_owners(Vec x, bool jacobi) {
  {
    LocalForm xl(x, false);
    LocalForm dl(delta_, false);
    double* xp = xl.span().data();
    double* dp = dl.span().data();
    if (jacobi) {
      const bool average = !fixed_lambda_;
      for (LocalIndex v = 0; v < n_owned_; ++v) {
        const double s = average ? 1.0 / cell_count_[v] : 1.0;
        for (int k = 0; k < 3; ++k) xp[3 * v + k] += s * dp[3 * v + k];
      }
      std::fill(dp, dp + 3 * static_cast<std::size_t>(n_local_), 0.0);
    } else {
      for (LocalIndex v : shared_owned_)
        for (int k = 0; k < 3; ++k) {
          xp[3 * v + k] += dp[3 * v + k];
          dp[3 * v + k] = 0.0;
        }
      std::fill(dp + 3 * static_cast<std::size_t>(n_owned_), dp + 3 * static_cast<std::size_t>(n_local_), 0.0);
    }
  }
  forward(x);
}

void PbdConstraints::colored_sweep(Vec x) {
  for (int color = 0; color < n_colors_; ++color) {
    const std::size_t begin = color_begin_[color], interior = interior_begin_[color], end = color_begin_[color + 1];
    if (size_ == 1) {
      LocalForm xl(x, false);
      project_range<false>(color, begin, end, xl.span().data(), nullptr, nullptr);
      continue;
    }
    {
      LocalForm xl(x, false);
      {
        LocalForm dl(delta_, false);  // the interface's ghost changes
        project_range<false>(color, begin, interior, xl.span().data(), dl.span().data(), nullptr);
      }
      // Their sum into the owners travels while the interior (no shared vertex, no ghost change) is projected.
      EDGEFEM_PETSC(VecGhostUpdateBegin(delta_, ADD_VALUES, SCATTER_REVERSE));
      project_range<false>(color, interior, end, xl.span().data(), nullptr, nullptr);
    }
    EDGEFEM_PETSC(VecGhostUpdateEnd(delta_, ADD_VALUES, SCATTER_REVERSE));
    add_into_owners(x, false);
  }
  project_contacts(x);
}

void PbdConstraints::project_contacts(Vec x) {
  if (!contact_) return;
  {
    LocalForm xl(x, false);
    contact_(xl.span().data());
  }
  if (size_ > 1) forward(x);
}

void PbdConstraints::jacobi_sweep(Vec x) {
  std::fill(change_.begin(), change_.end(), 0.0);
  {
    LocalForm xl(x, false);
    double* xp = xl.span().data();
    double* cp = change_.data();
    for (int color = 0; color < n_colors_; ++color)
      project_range<true>(color, color_begin_[color], color_begin_[color + 1], xp, nullptr, cp);
  }
  {
    LocalForm dl(delta_, false);
    std::copy(change_.begin(), change_.end(), dl.span().begin());
  }
  reverse_add(delta_);
  add_into_owners(x, true);
  project_contacts(x);
}

}  // namespace edgefem
