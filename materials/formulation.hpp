#pragma once
/// \file formulation.hpp
/// The interface every tetrahedral formulation implements (edge/TSEP StVK, NSN, total-Lagrangian StVK).
///
/// Sign convention for the whole code (Kikuuwe's): the internal force is f = +dW/dx (the body's
/// resistance); the static residual is f(x) - f_ext, and K = df/dx is the Hessian of W.
///
/// A formulation works on one rank's *own* tetrahedra only, in that rank's local vertex numbering.
/// It never sees MPI or PETSc: the solver sums ranks' contributions (PETSc adds off-rank rows).
#include <array>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "mesh/mesh.hpp"

namespace edgefem {

/// Material constants of one tetrahedron (isotropic StVK + optional volumetric penalty of Kikuuwe §4:
/// W_vol = V0 * k_vol * |min(0, J-1)|^3 / 3, k_vol = E / (4 (1 - 2 nu))).
struct TetMaterial {
  double lambda = 0.0;      ///< Lamé lambda = E nu / ((1+nu)(1-2nu))
  double mu = 0.0;          ///< Lamé mu = E / (2 (1+nu))
  double k_vol = 0.0;       ///< volumetric penalty modulus (only used when volumetric is true)
  bool volumetric = false;

  static TetMaterial from_young_poisson(double young, double poisson, bool volumetric);
};

/// One tetrahedral formulation bound to a fixed set of tetrahedra and their reference positions.
class TetFormulation {
 public:
  virtual ~TetFormulation() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;

  /// Number of vertices of the numbering the positions x use (3 doubles per vertex).
  [[nodiscard]] virtual LocalIndex n_vertices() const = 0;

  /// (row vertex, column vertex) of each 3x3 block force_and_stiffness() writes, local numbering.
  /// Fixed at construction. Repeated pairs are allowed: their values are summed by the assembler.
  [[nodiscard]] virtual const std::vector<std::array<LocalIndex, 2>>& block_pattern() const = 0;

  /// Strain energy W(x); x holds 3 * n_vertices() current positions.
  [[nodiscard]] virtual double energy(std::span<const double> x) const = 0;

  /// f := dW/dx, overwriting all 3 * n_vertices() entries (zero on vertices no tet touches).
  virtual void force(std::span<const double> x, std::span<double> f) const = 0;

  /// f := dW/dx and the 3x3 blocks of K = df/dx: 9 doubles per block_pattern() entry, row-major,
  /// block (a, b) = d f(a) / d x(b). Overwrites f and blocks.
  virtual void force_and_stiffness(std::span<const double> x, std::span<double> f,
                                   std::span<double> blocks) const = 0;

  /// Bytes of precomputed per-primitive data this formulation holds (for reports).
  [[nodiscard]] virtual std::size_t bytes() const = 0;
};

/// Edge/TSEP StVK (Kikuuwe eqs. 8-32, algF/algKE/algKV, volumetric algB). With nsn = true the TSEP
/// loops are skipped (nonlinear spring network). coords: 3 per vertex (reference); tets: 4 per tet.
std::unique_ptr<TetFormulation> make_stvk_tsep(std::span<const double> coords, std::span<const LocalIndex> tets,
                                               std::span<const TetMaterial> materials, bool nsn = false);

/// Total-Lagrangian StVK (Kikuuwe appendix B), same energy as make_stvk_tsep (nsn = false).
std::unique_ptr<TetFormulation> make_stvk_tl(std::span<const double> coords, std::span<const LocalIndex> tets,
                                             std::span<const TetMaterial> materials);

/// Green strain E and 2nd Piola-Kirchhoff stress S (StVK, row-major 3x3) of one tetrahedron, for output.
/// x_ref and x: 12 doubles (4 vertices). The volumetric penalty's stress is included when active.
void tet_strain_stress(const double* x_ref, const double* x, const TetMaterial& material,
                       std::array<double, 9>& green_strain, std::array<double, 9>& stress);

}  // namespace edgefem
