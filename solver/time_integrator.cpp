// SPDX-License-Identifier: BSD-3-Clause
/// \file time_integrator.cpp
/// The integrators' shared state access and checkpoints (time_integrator.hpp).
#include "solver/time_integrator.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "partition/collective.hpp"

namespace edgefem {
namespace {

using Owned = VecArray;  ///< the owned entries of a (ghosted) global vector

/// The values stored under `name`, or nullptr (the first of that name).
const std::vector<double>* find_field(const std::vector<std::string>& names,
                                      const std::vector<std::vector<double>>& values, const std::string& name) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return &values[i];
  return nullptr;
}

std::vector<double> owned_values(Vec v) {
  Owned a(v, true);
  return {a.span().begin(), a.span().end()};
}

}  // namespace

EnergyReport state_energy(MPI_Comm comm, Assembler& assembler, const Model& model, std::span<const double> reference,
                          double t, Vec x, Vec v, Vec w, Vec work) {
  EnergyReport e;
  assembler.set_positions(x);
  e.strain = assembler.energy();
  assembler.mass_multiply(v, work);
  PetscScalar vmv = 0.0, external = 0.0;
  EDGEFEM_PETSC(VecDot(v, work, &vmv));
  e.kinetic = 0.5 * vmv;
  EDGEFEM_PETSC(VecSum(w, &external));
  e.external_work = external;
  double local = 0.0;
  {
    Owned xo(x, true);
    local = attachment_energy(model, reference, t, xo.span());
  }
  MPI_Allreduce(&local, &e.attachment, 1, MPI_DOUBLE, MPI_SUM, comm);
  return e;
}

TimeIntegrator::TimeIntegrator(MPI_Comm comm, const DynamicSpec& spec, const LocalMesh& mesh, Model model, bool quiet)
    : comm_(comm),
      spec_(spec),
      mesh_(mesh),
      model_(std::move(model)),
      assembler_(comm, mesh, model_),
      quiet_(quiet),
      n_steps_(std::llround(spec.end_time / spec.dt)) {}

TimeIntegrator::~TimeIntegrator() = default;

std::vector<double> TimeIntegrator::local_positions() {
  assembler_.set_positions(state_vectors().positions);
  return assembler_.local_positions();
}

std::vector<double> TimeIntegrator::local_velocities() {
  const StateVectors s = state_vectors();
  EDGEFEM_PETSC(VecCopy(s.velocities, s.scratch));
  EDGEFEM_PETSC(VecGhostUpdateBegin(s.scratch, INSERT_VALUES, SCATTER_FORWARD));
  EDGEFEM_PETSC(VecGhostUpdateEnd(s.scratch, INSERT_VALUES, SCATTER_FORWARD));
  LocalForm f(s.scratch, true);
  return {f.span().begin(), f.span().end()};
}

std::vector<double> TimeIntegrator::local_internal_force() {
  assembler_.set_positions(state_vectors().positions);
  return assembler_.local_internal_force();
}

EnergyReport TimeIntegrator::energy() {
  const StateVectors s = state_vectors();
  EnergyReport e = state_energy(comm_, assembler_, model_, mesh_.mesh.coords, time_, s.positions, s.velocities,
                                s.external_work, s.scratch);
  e.contact = contact_energy();
  return e;
}

CheckpointState TimeIntegrator::checkpoint() {
  before_checkpoint();
  CheckpointState s;
  s.step = step_;
  s.time = time_;
  s.dt = spec_.dt;
  s.integrator = to_string(spec_.integrator);
  for (const CheckpointVector& field : checkpoint_vectors()) {
    s.field_names.emplace_back(field.name);
    s.fields.push_back(owned_values(field.vector));
  }
  const std::vector<CheckpointCellField> cell_fields = checkpoint_cell_fields();
  for (const CheckpointCellField& field : cell_fields) {  // in global cell order (format version 3)
    s.cell_field_names.push_back(field.name);
    s.cell_fields.push_back(field.values());
  }
  if (!cell_fields.empty()) {
    s.n_cells = mesh_.n_global_cells;
    s.owned_cells.assign(mesh_.cell_global.begin(), mesh_.cell_global.end());
  }
  return s;
}

void TimeIntegrator::restore(const CheckpointState& s) {
  for (const CheckpointVector& field : checkpoint_vectors()) {
    const std::vector<double>* values = find_field(s.field_names, s.fields, field.name);
    if (values == nullptr && !field.required) {
      EDGEFEM_PETSC(VecSet(field.vector, 0.0));
      continue;
    }
    if (values == nullptr) throw std::runtime_error(std::string("checkpoint has no field '") + field.name + "'");
    Owned target(field.vector, false);
    if (values->size() != target.span().size()) throw std::runtime_error("checkpoint field size mismatch");
    std::copy(values->begin(), values->end(), target.span().begin());
  }
  for (const CheckpointCellField& field : checkpoint_cell_fields()) {
    const std::vector<double>* values = find_field(s.cell_field_names, s.cell_fields, field.name);
    run_collectively(comm_, [&] {
      if (values == nullptr)
        throw std::runtime_error("checkpoint has no cell field '" + field.name + "'" +
                                 (field.required_because.empty() ? "" : " (" + field.required_because + ")"));
      field.restore(*values);
    });
  }
  step_ = s.step;
  time_ = s.time;
  restored_ = true;
  after_restore();
}

}  // namespace edgefem
