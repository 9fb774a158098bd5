// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file pbd_sweep.hpp
/// The constraint sweeps of the position-based integrator (Bender et al. 2014, Algorithm 1 step 3): every
/// tetrahedron is one energy constraint C_e = E_e(x) (ModelInfo::element_energy, the Newton solver's material),
/// every membrane triangle one with the plane-stress StVK energy of trbs (membrane_energy.hpp, §4.3) or Volino's
/// weft/warp energy (volino.hpp: the paper's orthotropic cloth law, or nonlinear curves), every attached vertex one
/// with its penalty spring's energy k |x - a(t)|^2 / 2 (job `attachments`),
/// projected along the mass-weighted gradient,
///   PBD (xpbd = false, Bender eq. 2-3):  dlambda = -E / sum_i w_i |g_i|^2,
///   XPBD (Macklin et al. 2016) on C_e = sqrt(2 E_e / k), compliance alpha = 1/k, alpha~ = alpha/dt^2 (so that
///        C^2 / (2 alpha) = E_e: the stiffness does not cancel out), grad C = g / (k C):
///        jacobi: dlambda = (-C - alpha~ lambda) / (sum_i w_i |grad_i C|^2 + alpha~), dx_i = w_i dlambda grad_i C;
///        colored, tets: the block projection (pbd_block.hpp, issue 47): the tet's Green strain (6 components)
///        is one vector constraint with compliance (V0 D~)^-1 (D~ the material's small-strain tangent), in the
///        consistent form (the tet's share s_e of x - x* replaced at each projection): one Newton step of the tet's
///        local backward-Euler problem, with the geometric (stress) term in its Hessian. Its fixed point is the
///        backward-Euler step M (x - x*)/dt^2 + dE/dx = 0 and it converges for any dt (a scalar C = sqrt(2E/k)
///        per tet is explicit in the tet's other deformation modes and only converged while dt^2 w kappa < 1 per
///        tet); trbs triangles: the same block projection with their 3 Green-strain components (tri_block_step);
///        hinges (quadratic): their linear local step solved exactly (hinge_project); Volino triangles,
///        attachments: the scalar C in the consistent form (plain XPBD stalls a few per cent away from the
///        backward-Euler step for this nonlinear C),
///   PBD: dx_i = w_i dlambda g_i,
/// with w the inverse lumped mass per dof (0 on prescribed dofs). With set_inversion_handling(true) E_e is the
/// energy with inversion handling (ModelInfo::inverted_element_energy, materials/tet_inversion.hpp). k is the material's reference modulus (largest
/// diagonal entry of D); any k gives the same iterates.
///
/// Distribution: each rank projects its own cells only. The cells carry a global colour (partition/coloring.hpp):
/// cells of one colour share no vertex anywhere, so
///  - colored (Gauss-Seidel): the cells of one colour are projected in parallel (OpenMP); a rank writes the new
///    positions of its cells' vertices directly and records the change of each ghost vertex; after the colour the
///    ghost changes are added into their owners (VecGhost reverse scatter: exactly one nonzero term per vertex)
///    and the owners' positions sent to every ghost copy (forward scatter). The cells of a colour touching a shared
///    vertex are projected first, the others while the reverse scatter travels. Every vertex sees the same sequence of
///    updates on any number of ranks: the sweep is rank-count independent (to round-off of the summed masses).
///  - jacobi: every cell's correction from the same positions, summed per vertex (colour by colour, so threads do
///    not race), summed over ranks and divided by the number of cells at the vertex (averaging), once per sweep.
/// No PETSc beyond the two ghosted vectors; no allocation inside a sweep.
#include <mpi.h>
#include <petscvec.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "io/job.hpp"
#include "linalg/petsc_util.hpp"
#include "materials/element_energy.hpp"
#include "materials/element_energy_batch.hpp"
#include "materials/membrane_energy.hpp"
#include "materials/plasticity.hpp"
#include "materials/registry.hpp"
#include "partition/partition.hpp"
#include "pbd/pbd_block.hpp"
#include "solver/model.hpp"

namespace edgefem {

/// One rank's tetrahedra as energy constraints, sorted by colour.
class PbdConstraints {
 public:
  /// Collective (colours the mesh, sums the lumped masses). Every material's model must have an element_energy
  /// (and the mesh tetrahedra). The inverse masses are 1/m on free dofs and 0 on the model's prescribed dofs.
  /// Throws CollectiveError on every rank on bad input.
  /// `bending_stiffness` (per job material entry, 0 = none): membranes with bending also get one constraint per
  /// hinge stencil of this rank (LocalMesh::hinges), Bergou's isometric bending energy (materials/bending.hpp),
  /// coloured after the triangles.
  PbdConstraints(MPI_Comm comm, const LocalMesh& mesh, const Model& model,
                 std::span<const double> bending_stiffness = {});

  /// A new ghosted vector (3 dofs per owned vertex, this rank's ghosts): the layout the sweeps work on.
  [[nodiscard]] PetscOwner<Vec, VecDestroy> create_vector() const;

  /// Inverse mass per dof of the local vertices (3 per local vertex, ghosts included, 0 = prescribed).
  [[nodiscard]] std::span<const double> inverse_mass() const { return w_; }
  /// Compliance scale for XPBD: alpha~ = 1/(k dt^2); dt <= 0 selects plain PBD energy constraints.
  void set_time_step(double dt, bool xpbd) { dt_ = dt, xpbd_ = xpbd; }
  /// Appendix A verification: every constraint uses this fixed multiplier (dx_i = w_i lambda g_i, no division),
  /// and Jacobi sums the corrections without averaging. Empty = the normal projection.
  void set_fixed_lambda(std::optional<double> lambda) { fixed_lambda_ = lambda; }
  /// Inversion handling (Bender et al. §4.2, materials/tet_inversion.hpp): true = every material's
  /// ModelInfo::inverted_element_energy (where it has one), false (the default) = the plain element energy.
  void set_inversion_handling(bool on);
  [[nodiscard]] bool inversion_handling() const { return inversion_; }
  /// Tets with det F <= 0 at positions x (a create_vector() vector, ghosts up to date), summed over ranks.
  /// Collective.
  [[nodiscard]] std::int64_t count_inverted(Vec x) const;
  /// The attachments' anchors a(t) = X + d(t) (AttachmentSpec::displacement) for the sweeps that follow (call with
  /// the time at the end of the step).
  void set_anchor_time(double t);
  /// Plasticity (Bender et al. §4.1, materials/plasticity.hpp): per material entry a law, or none (elastic). When
  /// any entry is plastic, every tet gets a plastic strain (6 numbers, zero at first) and the tets of plastic
  /// entries use stvk_plastic_energy_gradient instead of their kernel. Not collective.
  void set_plasticity(std::span<const std::optional<PlasticLaw>> laws);
  [[nodiscard]] bool plastic() const { return !plastic_.empty(); }
  /// The flow rule (plastic_update) on every plastic tet of this rank at positions x (a create_vector() vector,
  /// ghosts up to date), time step dt. Depends only on each tet's own vertices: rank-count independent.
  void update_plasticity(Vec x, double dt);
  /// This rank's plastic strains in local cell order (LocalMesh cell t at 6 t; tensor components xx, yy, zz, xy,
  /// yz, zx; zero for elastic tets); empty when no material is plastic.
  [[nodiscard]] std::vector<double> plastic_strain() const;
  /// Set them (the layout of plastic_strain()). Throws std::invalid_argument on a size mismatch.
  void set_plastic_strain(std::span<const double> local_cell_order);
  /// The largest Frobenius norm of a plastic strain on all ranks (0 when none is plastic). Collective.
  [[nodiscard]] double max_plastic_strain() const;
  /// Zero the XPBD multipliers (at the start of every time step).
  void reset_multipliers();
  /// Consistent XPBD (colored): every constraint's share s_e of x - x* (12 numbers each; x = x* + W sum_e s_e), for
  /// an acceleration of the sweeps that combines iterates (pbd_chebyshev.hpp). Empty for PBD and Jacobi.
  [[nodiscard]] std::span<double> shares() { return contribution_; }

  /// Contact constraints (pbd_contact.hpp): `project` is called on the local positions (it may change owned
  /// vertices only) as the last colour of every sweep (colored: after the attachments; jacobi: after the averaged
  /// update), the ghosts updated after it. Empty: none.
  void set_contact(std::function<void(double*)> project) { contact_ = std::move(project); }
  /// The contact colour alone on x (a create_vector() vector), its ghosts updated after it. Collective when there
  /// is one.
  void project_contacts(Vec x);

  /// One sweep over all constraints (and the contacts, last). x: a create_vector() vector with its ghosts up to
  /// date; they are up to date again on return. Collective.
  void colored_sweep(Vec x);
  void jacobi_sweep(Vec x);

  [[nodiscard]] int n_colors() const { return n_colors_; }
  [[nodiscard]] std::int64_t n_constraints() const { return static_cast<std::int64_t>(material_.size()); }
  /// Bytes of the per-constraint data on this rank.
  [[nodiscard]] std::size_t bytes() const;

 private:
  /// Project constraint c at positions x (local form). Gauss-Seidel: applied to x in place, ghost vertices' changes
  /// also stored in ghost_change; Jacobi: added to change (x unchanged).
  /// What a constraint acts on: a cell, a bending stencil (4 vertices) or an attached vertex.
  enum class Stencil : std::uint8_t { cell, hinge, anchor };
  /// N vertices per constraint.
  template <int N, Stencil kStencil, bool kJacobi>
  void project(std::size_t c, double* x, double* ghost_change, double* change);
  /// Collective (constructor): the local vertices shared with another rank (1: a ghost, or owned and a ghost
  /// elsewhere); fills shared_owned_. Uses delta_ and leaves it zero.
  std::vector<std::uint8_t> find_shared_vertices();
  /// Constructor, on every rank inside one collective check: the membrane material entries' tables, kinds
  /// (volino_material_) and moduli. Throws std::invalid_argument for a model other than trbs or volino, or a volino
  /// material with viscosity.
  void set_membrane_materials(const Model& model);
  /// Constructor, likewise: the tet material entries' tables, kernels and moduli. Throws std::invalid_argument for
  /// a model without an element energy.
  void set_tet_materials(const Model& model);
  /// Constructor, likewise: the cells as constraints sorted by colour, per colour the interface (cells touching a
  /// shared vertex) first (color: per cell, made 2 colour + interior here), with their rest shapes.
  void place_cells(const LocalMesh& mesh, const Model& model, std::vector<std::int32_t>& color,
                   std::span<const std::uint8_t> shared);
  /// The hinge stencils (4 vertices each) of the bending materials (kb > 0), with their weights, stiffness and
  /// areas appended to hinge_*. Throws std::invalid_argument when the mesh has no hinge stencils.
  std::vector<LocalIndex> collect_hinges(const LocalMesh& mesh, const Model& model,
                                         std::span<const double> bending_stiffness);
  /// Collective (constructor): the bending constraints and their colours, after the cells.
  void append_hinges(MPI_Comm comm, const LocalMesh& mesh, const Model& model,
                     std::span<const double> bending_stiffness, std::span<const std::uint8_t> shared);
  /// Collective (constructor), last: the inverse masses w_ and cell counts (summed over the ranks through delta_,
  /// left zero), change_.
  void set_masses(const Model& model);
  /// Collective (constructor): the attachment constraints and their colours (anchor_*), after the cells and hinges.
  void append_attachments(MPI_Comm comm, const LocalMesh& mesh, const Model& model,
                          std::span<const std::uint8_t> shared);
  /// The update of constraint c from its energy and gradient g at the current positions (w: the inverse masses of
  /// its dofs; volume and k: the rest test's scale).
  template <int N, bool kJacobi>
  void correct(std::size_t c, const double* w, const double* g, double energy, double volume, double k, double* x,
               double* ghost_change, double* change);
  /// Tets [begin, end) of one colour, kLanes at a time through stvk_isotropic_lanes (element_energy_batch.hpp)
  /// where the material allows it (batchable_), else through project (OpenMP over the batches).
  template <bool kJacobi, bool kInversion>
  void project_tets_batched(std::size_t begin, std::size_t end, double* x, double* ghost_change, double* change);
  /// The coloured sweep's plain PBD update (as correct<4, false>) of kLanes tets from their batched energies and
  /// gradients: dx per dof and lane (XPBD: block_lanes).
  void lane_corrections(const Lanes& volume, const Lanes& modulus, const Lanes (&w)[12], const Lanes (&g)[12],
                        const Lanes& energy, Lanes (&dx)[12]);
  /// Tet c's energy and gradient g at positions xe (its kernel, or the plastic one).
  double tet_energy(std::size_t c, const double* xe, double* g) const;
  /// The coloured XPBD sweep's block projection (pbd_block.hpp) of cell c (a tet, or a trbs triangle through
  /// tri_block_direction): xe, w, g, energy its 12 (9) positions,
  /// inverse masses, energy gradient and energy at xe; contribution_ and x updated (ghost changes into
  /// ghost_change). A step that changes F by more than 0.1 is checked against the cell's local objective
  /// (step_length). A cell whose energy evaluation failed (NaN) is left as it is.
  void block_project(std::size_t c, const double* xe, const double* w, const double* g, double energy, double* x,
                     double* ghost_change);
  /// The block step ds of trbs triangle c (tri_block_step, pbd_block.hpp; 9 numbers) at positions xe with residual
  /// r = s + dt^2 g; returns |dF|^2 of the position change W ds.
  double tri_block_direction(std::size_t c, const double* xe, const double* w, const double* res, double* ds) const;
  /// The consistent projection of hinge c (Bergou's quadratic bending W = |sum_i k_i x_i|^2 / 2): its local
  /// backward-Euler problem s = -dt^2 g(y + W s) is linear and solved exactly, per axis
  ///   h = (sum_i k_i y_i) / (1 + dt^2 sum_i w_i k_i^2),  s_i = -dt^2 k_i h,
  /// instead of the scalar constraint sqrt(2 W / k), which is explicit in the directions of sum_i k_i x_i other than
  /// its own.
  void hinge_project(std::size_t c, const double* xe, const double* w, double* x, double* ghost_change);
  /// The energy and gradient of cell c (a tet or a trbs triangle) at positions xe.
  double cell_energy(std::size_t c, const double* xe, double* g) const;
  /// The block step ds of tet c at positions xe (inverse masses w, energy gradient g) with residual r = s + dt^2 g
  /// (12 each); returns |dF|^2 of the position change W ds.
  double block_direction(std::size_t c, const double* xe, const double* w, const double* g, const double* res,
                         double* ds) const;
  /// rho >= |S| for tet c's geometric term at F (gradient g): StVK's second Piola stress (plastic: of the elastic
  /// strain), other laws' F^-1 P.
  double stress_bound(std::size_t c, const double* F, const double* g) const;
  /// The step length theta (1, 1/2, 1/4, ...; 0 when none is accepted) along ds at which cell c's local objective
  /// s^T W s / (2 dt^2) + E_e decreases enough (Armijo).
  double step_length(std::size_t c, const double* xe, const double* w, const double* res, const double* ds,
                     double energy) const;
  /// The block projection of the tets [first, first + count) of one batch (kLanes at a time, block_step_lanes) from
  /// their batched gradients and stress bounds; the lanes flagged in `scalar` (another kernel, the principal route)
  /// take theirs from the scalar kernel first; tets with a partly prescribed vertex, a large step or a failed
  /// evaluation go through project.
  void block_lanes(std::size_t first, int count, const TetLanes& in, const Lanes (&w)[12], const Lanes (&g)[12],
                   const Lanes& bound, const bool* scalar, double* x, double* ghost_change);
  /// Lane l's block step into tet c's share and the positions (ghost changes into ghost_change).
  void apply_block_step(std::size_t c, const Lanes (&w)[12], const BlockBatch<kLanes>& io, int l, double* x,
                        double* ghost_change);
  /// block_lanes' inputs but the bound (spare lanes from count on: copies of lane 0).
  void fill_block_batch(std::size_t first, int count, const TetLanes& in, const Lanes (&g)[12],
                        BlockBatch<kLanes>& io) const;
  /// Project the constraints [first, last) of colour `color` (OpenMP), dispatching on its kind.
  template <bool kJacobi>
  void project_range(int color, std::size_t first, std::size_t last, double* x, double* ghost_change, double* change);
  /// Collective: with delta_'s ghost entries already summed into their owners (reverse scatter), add delta_'s owned
  /// entries into x's (Jacobi: divided by the cells at the vertex unless the multiplier is fixed), zero delta_,
  /// update x's ghosts.
  void add_into_owners(Vec x, bool jacobi);

  MPI_Comm comm_;
  int size_ = 1;
  LocalIndex n_owned_ = 0, n_local_ = 0;
  int n_colors_ = 0;
  std::vector<std::size_t> color_begin_;  ///< n_colors + 1 offsets into the per-constraint arrays
  /// per colour: its first constraint without a shared vertex (those before it, the interface, have one)
  std::vector<std::size_t> interior_begin_;
  int nodes_ = 4;                                    ///< vertices per constraint: 4 (tets) or 3 (triangles)
  std::vector<std::array<LocalIndex, 4>> vertices_;  ///< per constraint (sorted by colour; triangles: 3 used)
  std::vector<TetRest> rest_;                        ///< tets
  std::vector<TriRest> tri_rest_;                    ///< triangles
  std::vector<MembraneMaterial> membrane_tables_;    ///< triangles: per material entry
  std::vector<VolinoMaterial> volino_tables_;        ///< triangles: per material entry (model volino)
  std::vector<std::uint8_t> volino_material_;        ///< triangles: per material entry, 1 = volino, 0 = trbs
  std::vector<VolinoTriangle> volino_rest_;          ///< per triangle when some material is volino (by constraint)
  VolinoStabilization volino_stabilization_ = VolinoStabilization::none;
  std::size_t n_cells_ = 0;                               ///< constraints [0, n_cells_) are cells, then the hinges
  int n_cell_colors_ = 0;                                 ///< colours [0, n_cell_colors_) are cells', then the hinges'
  std::vector<std::array<double, 4>> hinge_k_;            ///< per hinge (index c - n_cells_): Bergou's weights k
  std::vector<double> hinge_kb_, hinge_area_;             ///< per hinge: stiffness kb, A0 + A1 (the rest test's scale)
  std::size_t anchor_begin_ = 0;                          ///< constraints from here on are attachments
  int n_anchor_colors_ = 0;                               ///< the last colours: one per job.attachments entry
  std::vector<AttachmentSpec> anchor_specs_;              ///< per job.attachments entry
  std::vector<std::int32_t> anchor_spec_;                 ///< per attachment constraint (index c - anchor_begin_)
  std::vector<double> anchor_k_;                          ///< per attachment constraint: stiffness
  std::vector<double> anchor_reference_, anchor_target_;  ///< per attachment constraint: X and a(t), 3 each
  double anchor_scale_ = 1.0;                             ///< the rest test's scale: squared bounding-box diagonal
  std::vector<std::int32_t> material_;
  std::vector<LocalIndex> slot_cell_;    ///< cells: the local cell index of each constraint slot
  std::vector<double> plastic_;          ///< plasticity: 6 per cell slot (empty: no plastic material)
  std::vector<PlasticLaw> plastic_law_;  ///< per material entry
  std::vector<char> plastic_material_;   ///< per material entry: 1 = plastic
  std::vector<double> lambda_;           ///< XPBD multipliers of the current step
  std::vector<double> contribution_;     ///< consistent XPBD: 12 per constraint, grad C_e lambda_e (force units)
  std::vector<TetMaterial> tables_;
  std::vector<ElementEnergyGradient> kernel_;                          ///< per material entry: the one in use
  std::vector<ElementEnergyGradient> plain_kernel_, inverted_kernel_;  ///< per material entry
  bool inversion_ = false;
  std::vector<std::uint8_t> batchable_;  ///< per material entry: isotropic StVK (kernel_ in use)
  std::vector<double> modulus_;          ///< per material entry: k (XPBD compliance 1/k)
  /// per material entry: the small-strain tangent D~ (D, plus k_vol e e^T for the quadratic penalty; the cubic one
  /// has no curvature at J = 1) and its inverse (row-major), the block projection's metric and compliance
  std::vector<std::array<double, 36>> tangent_, compliance_;
  /// per material entry (trbs): the plane-stress tangent D (3 x 3, row-major) of the triangles' block projection
  /// and its inverse
  std::vector<std::array<double, 9>> tri_tangent_, tri_compliance_;
  std::vector<std::uint8_t> uniform_;     ///< per cell: its vertices each weigh alike in x, y, z (block_step_lanes)
  std::vector<double> w_;                 ///< inverse mass per local dof
  std::vector<double> cell_count_;        ///< per local vertex: cells at it on all ranks (jacobi)
  std::vector<LocalIndex> shared_owned_;  ///< owned vertices that are ghosts on another rank
  std::vector<double> change_;            ///< jacobi: summed changes per local dof
  std::vector<PetscInt> ghost_ids_;       ///< global vertex ids of the ghosts
  PetscOwner<Vec, VecDestroy> delta_;     ///< ghost changes (colored) / summed changes (jacobi)
  double dt_ = 0.0;
  bool xpbd_ = false;
  std::optional<double> fixed_lambda_;
  std::function<void(double*)> contact_;  ///< the contact colour (set_contact)
};

}  // namespace edgefem
