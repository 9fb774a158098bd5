// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file assembly.hpp
/// The one place that hands kernel results to PETSc (docs/theory/design.md, "Architecture": only solver/assembly* calls
/// MatSetValues* / VecSetValues*).
///
/// Vectors are ghosted (VecGhost, block size 3): the local form holds the owned vertices then the ghosts,
/// in LocalMesh order. Positions are pushed to the ghosts with a forward scatter before every evaluation;
/// forces computed on a rank's own cells are summed into their owners with a reverse scatter (ADD).
/// The matrix uses one COO pattern built once (9 entries per 3x3 block of every formulation's block
/// pattern); each evaluation fills the value array with OpenMP kernels and AijInsertion writes it into the
/// matrix (summing repeated entries and sending the entries of other ranks' rows to their owners).
#include <mpi.h>
#include <petscmat.h>

#include <array>
#include <optional>
#include <span>
#include <vector>

#include "contact/contact_potential.hpp"
#include "partition/partition.hpp"
#include "linalg/aij_insertion.hpp"
#include "solver/model.hpp"
#include "linalg/petsc_util.hpp"

namespace edgefem {

/// RAII access to the local form (owned + ghost entries) of a ghosted vector.
class LocalForm {
 public:
  LocalForm(Vec v, bool read_only);
  ~LocalForm();
  LocalForm(const LocalForm&) = delete;
  LocalForm& operator=(const LocalForm&) = delete;
  [[nodiscard]] std::span<double> span() { return array_->span(); }

 private:
  Vec global_, local_ = nullptr;
  std::optional<VecArray> array_;
};

/// The matrix handed to PETSc: stiffness * K + mass * M + diag(diagonal), with prescribed rows and columns
/// replaced by the identity. `diagonal` (optional) holds 3 values per owned vertex.
struct MatrixCoefficients {
  double stiffness = 1.0;
  double mass = 0.0;
  std::span<const double> diagonal{};
  /// Optional lifting of prescribed values: lift_out := A_fc u_c on free rows (0 on prescribed rows), where
  /// A = stiffness K + mass M before the prescribed rows/columns are replaced and u_c are lift_in's values at
  /// the prescribed dofs. Both are vectors of this layout; lift_in's ghosts need not be up to date.
  Vec lift_in = nullptr;
  Vec lift_out = nullptr;
  /// Viscous formulations: add damping * D(positions, velocity), D = d f_v / d v (velocity: a vector of this
  /// layout; its ghosts need not be up to date).
  double damping = 0.0;
  Vec velocity = nullptr;
  /// Contact (solver/contact.hpp): 3 x 3 blocks added to owned vertices' diagonal blocks (local vertex indices), as
  /// they are (not scaled by `stiffness`). The diagonal blocks are in every formulation's pattern: no new entries.
  std::span<const contact::VertexBlock> vertex_blocks{};
};

class Assembler {
 public:
  /// Collective. `model` must outlive the assembler.
  Assembler(MPI_Comm comm, const LocalMesh& mesh, const Model& model);

  /// A new ghosted vector with this layout (3 dofs per owned vertex); the caller owns it.
  [[nodiscard]] PetscOwner<Vec, VecDestroy> create_vector() const;
  [[nodiscard]] Vec reference() const { return reference_; }  ///< reference positions
  /// out := the external force (gravity, tractions) at time t (static: the load factor), summed over ranks.
  void external_force(double t, Vec out) const;
  /// y := M x (lumped: the summed vertex masses; consistent: the P1 mass matrix). Collective.
  void mass_multiply(Vec x, Vec y) const;
  /// The summed lumped mass of each owned dof (3 per owned vertex; the same value thrice).
  [[nodiscard]] const std::vector<double>& lumped_mass() const { return owned_mass_; }
  /// The consistent mass matrix (no prescribed-row treatment), or nullptr with lumped mass.
  [[nodiscard]] Mat mass_matrix() const { return mass_matrix_; }
  [[nodiscard]] Mat matrix() const { return matrix_; }  ///< the stiffness matrix (the COO entries' pattern)
  [[nodiscard]] const std::vector<PetscInt>& dirichlet_rows() const { return dirichlet_rows_; }

  /// Copy x (any vector of this layout) to the internal positions and update their ghosts. Collective.
  void set_positions(Vec x);
  /// Current positions of all local vertices (owned then ghosts).
  [[nodiscard]] std::vector<double> local_positions();
  /// Each owned vertex's rotation from the reference to the positions last scattered (the last residual's or
  /// Jacobian's): the polar factor of the sum, over the edges of this rank's tets at the vertex, of
  /// (x_a - x_b)(X_a - X_b)^T; 9 values per vertex, row-major. Empty without tetrahedra.
  [[nodiscard]] std::vector<double> vertex_rotations();
  /// out := f_int(positions) = dW/dx summed over ranks. `out` may be any vector of this layout. Collective.
  void internal_force(Vec out);
  /// The internal force with ghosts up to date (for output). Collective.
  [[nodiscard]] std::vector<double> local_internal_force();
  /// P := c.stiffness K(positions) + c.mass M + diag(c.diagonal), prescribed rows and columns replaced by the
  /// identity. Collective.
  void stiffness(Mat P, const MatrixCoefficients& c = {});
  /// Both at once, from one kernel pass: f := f_int(positions) (summed over ranks) and P as stiffness().
  void force_and_stiffness(Vec f, Mat P, const MatrixCoefficients& c = {});
  /// Strain energy W(positions), summed over ranks. Collective.
  [[nodiscard]] double energy();
  /// True when some formulation on some rank has viscous forces (the same on every rank).
  [[nodiscard]] bool viscous() const { return viscous_; }
  /// out := f_v(positions, velocity) summed over ranks (velocity: any vector of this layout). Collective.
  void viscous_force(Vec velocity, Vec out);

  /// Bytes of the formulations' precomputed data on this rank.
  [[nodiscard]] std::size_t kernel_bytes() const;
  /// Number of COO entries (9 per block, then the owned dofs' diagonal) on this rank.
  [[nodiscard]] std::size_t coo_entries() const { return n_coo_entries_; }
  /// Bytes of the COO value array now: it lives from a matrix's evaluation to its hand-over to PETSc only (issue 56:
  /// between assemblies its heap serves the Krylov solve's and the output's allocations), 0 in between.
  [[nodiscard]] std::size_t coo_bytes() const { return coo_values_.capacity() * sizeof(double); }
  /// Bytes of the matrix hand-over's maps on this rank (AijInsertion).
  [[nodiscard]] std::size_t insertion_bytes() const { return insertion_ ? insertion_->bytes() : 0; }
  /// Bytes of the assembler's vectors and per-dof arrays on this rank (ghosted positions and forces, loads, masses,
  /// the prescribed dofs' lists, the near-null space), besides the kernel data, the COO values and the matrix.
  [[nodiscard]] std::size_t state_bytes() const;

 private:
  MPI_Comm comm_;
  const LocalMesh& mesh_;
  const Model& model_;
  PetscOwner<Vec, VecDestroy> x_ghost_, f_ghost_, reference_;
  std::vector<PetscOwner<Vec, VecDestroy>> loads_;    ///< per Model::loads group, summed over ranks
  PetscOwner<Mat, MatDestroy> matrix_, mass_matrix_;  ///< mass_matrix_: consistent mass only
  std::vector<double> owned_mass_;                    ///< 3 per owned vertex
  std::vector<double> mass_values_;                   ///< consistent mass: one per kernel COO entry
  std::vector<char> owned_prescribed_;                ///< 3 per owned vertex
  bool viscous_ = false;
  PetscOwner<Vec, VecDestroy> velocity_ghost_;  ///< viscous: the velocity with its ghosts
  std::vector<double> damping_values_;          ///< viscous: D blocks, one per kernel COO entry
  std::vector<PetscInt> dirichlet_rows_;
  std::vector<double> coo_values_;  ///< n_coo_entries_ during an assembly, empty in between
  std::size_t n_coo_entries_ = 0;
  std::optional<AijInsertion> insertion_;  ///< writes coo_values_ into matrix_
  std::vector<double> force_buffer_;       ///< 3 * n_local, for formulations after the first
  std::vector<std::size_t> block_offset_;  ///< per formulation: its first block in coo_values_
  /// COO entries (indices into coo_values_) whose row or column is a prescribed dof on any rank: zeroed
  /// after every evaluation. The last 3 * n_owned COO entries are the diagonals of this rank's owned dofs
  /// (lumped mass, attachment springs; 1 at prescribed dofs), so the handed-over matrix has prescribed
  /// rows/columns set to the identity without a MatZeroRowsColumns (a parallel column search per assembly).
  std::vector<std::size_t> coo_prescribed_;
  /// For the coo_prescribed_ entries with a free row and a prescribed column: (entry, local row dof, local column dof).
  std::vector<std::array<std::size_t, 3>> coo_lift_;
  std::size_t n_kernel_entries_ = 0;
  /// Per owned vertex: the first COO entry of its diagonal block (v, v) in the formulations' pattern (contact's
  /// blocks go there), or SIZE_MAX when none has one.
  std::vector<std::size_t> diagonal_block_;
  /// Adds c.vertex_blocks into coo_values_ (hand_matrix_to_petsc).
  void add_vertex_blocks(const MatrixCoefficients& c);
  /// Set-up (constructor): the ghosted vectors, the reference positions, the summed loads and lumped mass.
  void create_vectors();
  /// 1 at every local dof (owned + ghost) prescribed on any rank. Collective.
  [[nodiscard]] std::vector<char> prescribed_local_dofs() const;
  /// Set-up: the COO indices (the formulations' blocks, then the owned diagonal) into coo_i/coo_j, with
  /// block_offset_, coo_prescribed_, coo_lift_, n_kernel_entries_ and coo_values_. Collective.
  void build_coo_pattern(std::vector<PetscInt>& coo_i, std::vector<PetscInt>& coo_j);
  /// Set-up, consistent mass: mass_values_ and the assembled mass_matrix_ on the COO pattern. Collective.
  void create_consistent_mass_matrix(const std::vector<PetscInt>& coo_i, const std::vector<PetscInt>& coo_j);
  /// Run every formulation's force_and_stiffness into coo_values_ and the local form of f_ghost_ (summed).
  void evaluate_force_and_stiffness();
  void hand_matrix_to_petsc(Mat P, const MatrixCoefficients& c);
  /// Forward ghost update of any vector of this layout.
  static void update_ghosts(Vec v);
  PetscLogEvent event_force_ = 0, event_stiffness_ = 0;
};

}  // namespace edgefem
