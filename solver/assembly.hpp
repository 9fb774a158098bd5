#pragma once
/// \file assembly.hpp
/// The one place that hands kernel results to PETSc (DESIGN.md: only solver/assembly* calls
/// MatSetValues* / VecSetValues*).
///
/// Vectors are ghosted (VecGhost, block size 3): the local form holds the owned vertices then the ghosts,
/// in LocalMesh order. Positions are pushed to the ghosts with a forward scatter before every evaluation;
/// forces computed on a rank's own cells are summed into their owners with a reverse scatter (ADD).
/// The matrix uses one COO pattern built once (9 entries per 3x3 block of every formulation's block
/// pattern); each evaluation fills the value array with OpenMP kernels and hands it over in one
/// MatSetValuesCOO call (PETSc sums repeated and off-rank entries).
#include <mpi.h>
#include <petscmat.h>

#include <span>
#include <vector>

#include "partition/partition.hpp"
#include "solver/model.hpp"
#include "solver/petsc_util.hpp"

namespace edgefem {

/// RAII access to the local form (owned + ghost entries) of a ghosted vector.
class LocalForm {
 public:
  LocalForm(Vec v, bool read_only);
  ~LocalForm();
  LocalForm(const LocalForm&) = delete;
  LocalForm& operator=(const LocalForm&) = delete;
  [[nodiscard]] std::span<double> span() { return {data_, static_cast<std::size_t>(size_)}; }

 private:
  Vec global_, local_ = nullptr;
  bool read_only_;
  PetscScalar* data_ = nullptr;
  PetscInt size_ = 0;
};

class Assembler {
 public:
  /// Collective. `model` must outlive the assembler.
  Assembler(MPI_Comm comm, const LocalMesh& mesh, const Model& model);

  /// A new ghosted vector with this layout (3 dofs per owned vertex); the caller owns it.
  [[nodiscard]] PetscOwner<Vec, VecDestroy> create_vector() const;
  [[nodiscard]] Vec reference() const { return reference_; }       ///< reference positions
  [[nodiscard]] Vec external_force() const { return f_ext_; }      ///< at load factor 1, summed over ranks
  [[nodiscard]] Mat matrix() const { return matrix_; }             ///< the COO-preallocated stiffness matrix
  [[nodiscard]] const std::vector<PetscInt>& dirichlet_rows() const { return dirichlet_rows_; }

  /// Copy x (any vector of this layout) to the internal positions and update their ghosts. Collective.
  void set_positions(Vec x);
  /// Current positions of all local vertices (owned then ghosts).
  [[nodiscard]] std::vector<double> local_positions();
  /// out := f_int(positions) = dW/dx summed over ranks. `out` may be any vector of this layout. Collective.
  void internal_force(Vec out);
  /// The internal force with ghosts up to date (for output). Collective.
  [[nodiscard]] std::vector<double> local_internal_force();
  /// P := K(positions) with prescribed rows and columns replaced by the identity. Collective.
  void stiffness(Mat P);
  /// Both at once, from one kernel pass: f := f_int(positions) (summed over ranks) and P := K as stiffness().
  void force_and_stiffness(Vec f, Mat P);

  /// Bytes of the formulations' precomputed data on this rank.
  [[nodiscard]] std::size_t kernel_bytes() const;
  /// Number of COO entries (9 per block) on this rank.
  [[nodiscard]] std::size_t coo_entries() const { return coo_values_.size(); }

 private:
  MPI_Comm comm_;
  const LocalMesh& mesh_;
  const Model& model_;
  PetscOwner<Vec, VecDestroy> x_ghost_, f_ghost_, f_ext_, reference_;
  PetscOwner<Mat, MatDestroy> matrix_;
  std::vector<PetscInt> dirichlet_rows_;
  std::vector<double> coo_values_;
  std::vector<double> force_buffer_;        ///< 3 * n_local, for formulations after the first
  std::vector<std::size_t> block_offset_;   ///< per formulation: its first block in coo_values_
  /// COO entries (indices into coo_values_) whose row or column is a prescribed dof on any rank: zeroed
  /// after every evaluation. The last dirichlet_rows_.size() COO entries are the unit diagonals of this
  /// rank's prescribed dofs, so the handed-over matrix is K with prescribed rows/columns set to identity
  /// without a MatZeroRowsColumns (which costs a parallel column search on every assembly).
  std::vector<std::size_t> coo_prescribed_;
  std::size_t n_kernel_entries_ = 0;
  /// Run every formulation's force_and_stiffness into coo_values_ and the local form of f_ghost_ (summed).
  void evaluate_force_and_stiffness();
  void hand_matrix_to_petsc(Mat P);
  PetscLogEvent event_force_ = 0, event_stiffness_ = 0;
};

}  // namespace edgefem
