/// \file pbd_sweep.cpp
/// Constraint sweeps of the position-based integrator (pbd_sweep.hpp).
#include "solver/pbd_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "materials/element_energy_inline.hpp"
#include "materials/tet_inversion.hpp"
#include "partition/collective.hpp"
#include "partition/coloring.hpp"
#include "solver/assembly.hpp"

namespace edgefem {

namespace {

/// Below this strain energy density per unit modulus (strain ~1e-14) a constraint is at rest and skipped: a
/// relative test, independent of units and element size (Bender's absolute 1e-6 freezes small SI elements).
constexpr double kRestDensity = 1e-28;

void forward(Vec v) {
  EDGEFEM_PETSC(VecGhostUpdateBegin(v, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(v, INSERT_VALUES, SCATTER_FORWARD));
}
void reverse_add(Vec v) {
  EDGEFEM_PETSC(VecGhostUpdateBegin(v, ADD_VALUES, SCATTER_REVERSE));
  EDGEFEM_PETSC(VecGhostUpdateEnd(v, ADD_VALUES, SCATTER_REVERSE));
}

}  // namespace

PbdConstraints::PbdConstraints(MPI_Comm comm, const LocalMesh& mesh, const Model& model)
    : comm_(comm), n_owned_(mesh.n_owned), n_local_(mesh.n_local()) {
  MPI_Comm_size(comm, &size_);
  for (LocalIndex v = n_owned_; v < n_local_; ++v) ghost_ids_.push_back(static_cast<PetscInt>(mesh.global_vertex[v]));
  std::vector<std::int32_t> color;
  color = distributed_cell_colors(comm, mesh, model.nodes_per_cell, &n_colors_);
  run_collectively(comm, [&] {
    if (model.cell_kind != CellKind::tetrahedron)
      throw std::invalid_argument("integrator position-based: membranes (triangles) are not supported yet");
    tables_ = model.materials.tet;
    for (std::size_t m = 0; m < tables_.size(); ++m) {
      const ModelInfo* info = model.material_model[m];
      if (info->element_energy == nullptr)
        throw std::invalid_argument("integrator position-based: model '" + std::string(info->name) +
                                    "' has no element energy");
      kernel_.push_back(info->element_energy);
      plain_kernel_.push_back(info->element_energy);
      inverted_kernel_.push_back(info->inverted_element_energy ? info->inverted_element_energy
                                                               : info->element_energy);
      const double* D = tables_[m].D.data();
      modulus_.push_back(std::max({D[0], D[7], D[14]}));
    }
    const LocalIndex n_tets = mesh.mesh.n_tets();
    color_begin_.assign(static_cast<std::size_t>(n_colors_) + 1, 0);
    for (LocalIndex t = 0; t < n_tets; ++t) ++color_begin_[color[t] + 1];
    std::partial_sum(color_begin_.begin(), color_begin_.end(), color_begin_.begin());
    std::vector<std::size_t> next(color_begin_.begin(), color_begin_.end() - 1);
    vertices_.resize(n_tets);
    rest_.resize(n_tets);
    material_.resize(n_tets);
    for (LocalIndex t = 0; t < n_tets; ++t) {  // ascending local index inside a colour
      const std::size_t c = next[color[t]]++;
      double X[12];
      for (int a = 0; a < 4; ++a) {
        const LocalIndex v = mesh.mesh.tets[4 * t + a];
        vertices_[c][a] = v;
        for (int k = 0; k < 3; ++k) X[3 * a + k] = mesh.mesh.coords[3 * v + k];
      }
      rest_[c] = tet_rest(X, mesh.cell_global[t]);
      material_[c] = model.cell_material[t];
    }
    lambda_.assign(n_tets, 0.0);
  });

  // Masses, prescribed dofs, cell counts and the owned vertices other ranks hold as ghosts, through delta_.
  delta_ = create_vector();
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
  std::fill(partial.begin(), partial.end(), 0.0);
  for (const auto& v : vertices_)
    for (LocalIndex a : v) partial[3 * static_cast<std::size_t>(a)] += 1.0;
  const std::vector<double> count = summed(partial);
  cell_count_.resize(n_local_);
  for (LocalIndex v = 0; v < n_local_; ++v) cell_count_[v] = std::max(1.0, count[3 * static_cast<std::size_t>(v)]);
  std::fill(partial.begin(), partial.end(), 0.0);
  for (std::size_t i = 3 * static_cast<std::size_t>(n_owned_); i < n_dofs; ++i) partial[i] = 1.0;
  {
    LocalForm d(delta_, false);
    std::copy(partial.begin(), partial.end(), d.span().begin());
  }
  reverse_add(delta_);
  {
    LocalForm d(delta_, false);
    for (LocalIndex v = 0; v < n_owned_; ++v)
      if (d.span()[3 * static_cast<std::size_t>(v)] != 0.0) shared_owned_.push_back(v);
    std::fill(d.span().begin(), d.span().end(), 0.0);
  }
  change_.assign(n_dofs, 0.0);
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
}

std::int64_t PbdConstraints::count_inverted(Vec x) const {
  std::int64_t local = 0;
  {
    LocalForm xl(x, true);
    const double* xp = xl.span().data();
    for (std::size_t c = 0; c < vertices_.size(); ++c) {
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

void PbdConstraints::reset_multipliers() {
  std::fill(lambda_.begin(), lambda_.end(), 0.0);
  if (xpbd_) contribution_.assign(12 * lambda_.size(), 0.0);
}

std::size_t PbdConstraints::bytes() const {
  return vertices_.size() * sizeof(vertices_[0]) + rest_.size() * sizeof(TetRest) +
         material_.size() * sizeof(std::int32_t) + lambda_.size() * sizeof(double) +
         contribution_.size() * sizeof(double);
}

template <bool kJacobi>
void PbdConstraints::project(std::size_t c, double* x, double* ghost_change, double* change) {
  const std::array<LocalIndex, 4>& v = vertices_[c];
  double xe[12], g[12], w[12];
  for (int a = 0; a < 4; ++a)
    for (int k = 0; k < 3; ++k) {
      xe[3 * a + k] = x[3 * v[a] + k];
      w[3 * a + k] = w_[3 * v[a] + k];
    }
  const std::int32_t m = material_[c];
  const ElementEnergyGradient kernel = kernel_[m];
  const double energy = kernel == &stvk_element_energy_gradient  // the same, inlined
                            ? stvk_energy_gradient_inline(rest_[c], xe, tables_[m], g)
                        : kernel == &stvk_inversion_energy_gradient
                            ? stvk_energy_gradient_inline<true>(rest_[c], xe, tables_[m], g)
                            : kernel(rest_[c], xe, tables_[m], g);
  double scale = 0.0;  // dx_i = scale * w_i * g_i
  if (fixed_lambda_) {
    scale = *fixed_lambda_;
  } else {
    double wg2 = 0.0;
    for (int i = 0; i < 12; ++i) wg2 += w[i] * g[i] * g[i];
    const double k = modulus_[m];
    if (!(energy > kRestDensity * k * rest_[c].v0) || !(wg2 > 0.0)) {
      // At rest: the element's force -dt^2 g is zero, so is its share of x - x* (consistent XPBD).
      if (xpbd_ && !kJacobi) {
        double* s = contribution_.data() + 12 * c;
        for (int a = 0; a < 4; ++a)
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
      for (int i = 0; i < 12; ++i) ws += w[i] * g[i] * s[i];
      const double lambda = (-constraint + to_grad * ws) / (wg2 * to_grad * to_grad + alpha);
      lambda_[c] = lambda;
      for (int a = 0; a < 4; ++a)
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
  for (int a = 0; a < 4; ++a)
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

void PbdConstraints::apply_changes(Vec x, bool jacobi) {
  reverse_add(delta_);
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
    const std::int64_t begin = static_cast<std::int64_t>(color_begin_[color]);
    const std::int64_t end = static_cast<std::int64_t>(color_begin_[color + 1]);
    {
      LocalForm xl(x, false);
      double* xp = xl.span().data();
      std::optional<LocalForm> dl;
      double* dp = nullptr;
      if (size_ > 1) dl.emplace(delta_, false), dp = dl->span().data();
#pragma omp parallel for schedule(static)
      for (std::int64_t c = begin; c < end; ++c) project<false>(static_cast<std::size_t>(c), xp, dp, nullptr);
    }
    if (size_ > 1) apply_changes(x, false);
  }
}

void PbdConstraints::jacobi_sweep(Vec x) {
  std::fill(change_.begin(), change_.end(), 0.0);
  {
    LocalForm xl(x, false);
    double* xp = xl.span().data();
    double* cp = change_.data();
    for (int color = 0; color < n_colors_; ++color) {
      const std::int64_t begin = static_cast<std::int64_t>(color_begin_[color]);
      const std::int64_t end = static_cast<std::int64_t>(color_begin_[color + 1]);
#pragma omp parallel for schedule(static)
      for (std::int64_t c = begin; c < end; ++c) project<true>(static_cast<std::size_t>(c), xp, nullptr, cp);
    }
  }
  {
    LocalForm dl(delta_, false);
    std::copy(change_.begin(), change_.end(), dl.span().begin());
  }
  apply_changes(x, true);
}

}  // namespace edgefem
