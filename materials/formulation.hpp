// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file formulation.hpp
/// The interface every tetrahedral formulation implements (edge/TSEP StVK, NSN, total-Lagrangian StVK).
///
/// Sign convention for the whole code (Kikuuwe's): the internal force is f = +dW/dx (the body's
/// resistance); the static residual is f(x) - f_ext, and K = df/dx is the Hessian of W.
///
/// A formulation works on one rank's *own* tetrahedra only, in that rank's local vertex numbering.
/// It never sees MPI or PETSc: the solver sums ranks' contributions (PETSc adds off-rank rows).
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "mesh/mesh.hpp"

namespace edgefem {

/// Volumetric penalty W_vol = V0 k_vol psi(J - 1) added to the StVK energy of a tetrahedron (J = det F):
/// - cubic (Kikuuwe §4): psi(t) = |min(0, t)|^3 / 3, active under compression only (C^2 at J = 1);
/// - quadratic: psi(t) = t^2 / 2, active for every J (adds V0 k_vol dJ dJ^T to the rest stiffness);
/// - none.
enum class VolumetricPenalty : std::uint8_t { none, cubic, quadratic };

/// Material constants of one tetrahedron: a general (anisotropic) St. Venant-Kirchhoff law plus an optional
/// volumetric penalty. Formulations take a small TABLE of these and a per-tet index into it.
struct TetMaterial {
  /// Elasticity matrix, 6x6 row-major, Voigt order for the strain eps = [Exx, Eyy, Ezz, 2Exy, 2Eyz, 2Ezx]:
  /// w = eps^T D eps / 2, S_voigt = [Sxx, Syy, Szz, Sxy, Syz, Szx] = D eps. Symmetric positive definite.
  std::array<double, 36> D{};
  /// True when D is isotropic; lambda and mu are then valid and the kernels use closed forms.
  bool isotropic = false;
  double lambda = 0.0;  ///< Lame lambda = E nu / ((1+nu)(1-2nu)) (isotropic only, else 0)
  double mu = 0.0;      ///< Lame mu = E / (2 (1+nu)) (isotropic only, else 0)
  VolumetricPenalty volumetric = VolumetricPenalty::none;
  /// Penalty modulus: 3/4 of the Voigt bulk modulus, (1/12) sum_{i,j<3} D_ij; E / (4 (1 - 2 nu)) if isotropic.
  double k_vol = 0.0;

  /// Isotropic StVK. Throws std::invalid_argument unless young > 0 and -1 < poisson < 0.5.
  static TetMaterial isotropic_material(double young, double poisson, VolumetricPenalty volumetric);

  /// Transversely isotropic StVK with symmetry axis `fibre` (normalised here). In the local frame (axis 1 =
  /// fibre) the compliance is S11 = 1/Ef, S22 = S33 = 1/Et, S12 = S13 = -nu_ft/Ef, S23 = -nu_tt/Et,
  /// S(2e12) = S(2e31) = 1/G_ft, S(2e23) = 2(1+nu_tt)/Et; D is S^-1 rotated to the global axes (independent of
  /// how the frame is completed). Throws std::invalid_argument naming the violated condition when the fibre is
  /// zero, a modulus is not positive, or D is not positive definite (-1 < nu_tt and
  /// 1 - nu_tt - 2 nu_ft^2 Et/Ef > 0).
  static TetMaterial transversely_isotropic(std::array<double, 3> fibre, double young_fibre, double young_transverse,
                                            double shear_fibre, double poisson_fibre, double poisson_transverse,
                                            VolumetricPenalty volumetric);
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
  virtual void force_and_stiffness(std::span<const double> x, std::span<double> f, std::span<double> blocks) const = 0;

  /// Bytes of precomputed per-primitive data this formulation holds (for reports).
  [[nodiscard]] virtual std::size_t bytes() const = 0;

  /// Velocity-dependent (viscous) internal forces, for formulations that have them (Delingette's damped springs,
  /// Volino's viscosity): f_v(x, v) (added to f = dW/dx by the solver) and the damping blocks D = d f_v / d v
  /// (block_pattern() layout; `blocks` may be empty to skip them). Both are overwritten. Default: none.
  [[nodiscard]] virtual bool viscous() const { return false; }
  virtual void viscous_force_and_damping(std::span<const double> x, std::span<const double> v, std::span<double> f,
                                         std::span<double> blocks) const {
    (void)x, (void)v;
    std::fill(f.begin(), f.end(), 0.0);
    std::fill(blocks.begin(), blocks.end(), 0.0);
  }
};

// Factories. coords: 3 per vertex (reference positions); tets: 4 vertex ids per tet; `materials` is a table and
// material_of_tet[t] the index of tet t's entry (a tet carries 4 bytes of material data, not a 6x6 matrix).
// They throw std::invalid_argument on inconsistent sizes, out-of-range ids and degenerate tets.

/// Edge/TSEP StVK (Kikuuwe eqs. 8-32, algF/algKE/algKV, volumetric algB); L_T = (C_ini/12) Q^-T D Q^-1 (eq. 19)
/// for general D. With nsn = true the TSEP loops are skipped (nonlinear spring network), name "stvk-nsn".
std::unique_ptr<TetFormulation> make_stvk_tsep(std::span<const double> coords, std::span<const LocalIndex> tets,
                                               std::span<const TetMaterial> materials,
                                               std::span<const std::int32_t> material_of_tet, bool nsn = false);

/// Total-Lagrangian StVK (Kikuuwe appendix B), same energy as make_stvk_tsep (nsn = false) and the same block
/// pattern (vertex diagonal blocks, then both orientations of every edge).
std::unique_ptr<TetFormulation> make_stvk_tl(std::span<const double> coords, std::span<const LocalIndex> tets,
                                             std::span<const TetMaterial> materials,
                                             std::span<const std::int32_t> material_of_tet);

/// Small-strain linear elasticity, name "linear": the constant stiffness K0 = the StVK tangent at the reference
/// state (volumetric penalty's Hessian at rest included: 0 for cubic, V0 k_vol dJ dJ^T for quadratic),
/// f = K0 (x - X), W = (x - X)^T K0 (x - X) / 2 (Kikuuwe's f = K (p - p_ini)). Same block pattern as stvk.
std::unique_ptr<TetFormulation> make_linear(std::span<const double> coords, std::span<const LocalIndex> tets,
                                            std::span<const TetMaterial> materials,
                                            std::span<const std::int32_t> material_of_tet);

/// Green strain E and 2nd Piola-Kirchhoff stress S = D:E (row-major 3x3) of one tetrahedron, for output.
/// x_ref and x: 12 doubles (4 vertices). The volumetric penalty's stress k_vol psi'(J-1) J C^-1 is included.
/// `deformation_gradient` (optional, 9 doubles): the F the strain was computed from (row-major).
void tet_strain_stress(const double* x_ref, const double* x, const TetMaterial& material,
                       std::array<double, 9>& green_strain, std::array<double, 9>& stress,
                       double* deformation_gradient = nullptr);

}  // namespace edgefem
