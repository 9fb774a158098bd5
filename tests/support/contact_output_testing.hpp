// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file contact_output_testing.hpp
/// Helpers of the tests of a run's contact output (issue 48: reactions.csv's obstacle rows, summary.json's contact,
/// the point fields contact_gap and contact_force of the VTU and XDMF series): a job run through the program's own
/// path in the test's process (run_job, as `edgefem run JOB --output OUT --quiet`), and the readers of its files.
/// Test-only, header-only; the files are read on the rank that calls the readers (rank 0).
#include <hdf5.h>
#include <mpi.h>
#include <vtkDataArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLPUnstructuredGridReader.h>

#include <array>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run/run_job.hpp"
#include "run/summary_record.hpp"

namespace edgefem::contact_output_testing {

/// Runs the job file `job_path` into `out` on every rank of MPI_COMM_WORLD through run_job, under the program's
/// error policy (summary.json written). Returns the exit code. Collective.
inline int run_program(const std::string& job_path, const std::string& out) {
  RunOptions options;
  options.path = job_path;
  options.output = out;
  options.quiet = true;
  SummaryRecord record("test", 0, nullptr);
  record.started_on(MPI_COMM_WORLD);
  return run_reporting_errors(MPI_COMM_WORLD, record, [&] { return run_job(options, record); });
}

/// summary.json of the run in `out`.
inline nlohmann::json summary(const std::string& out) {
  std::ifstream in(out + "/summary.json");
  return nlohmann::json::parse(in);
}

/// The rows `obstacle:NAME` of out/reactions.csv: step -> (fx, fy, fz); `rows` counts every row of the file.
inline std::map<long long, std::array<double, 3>> obstacle_rows(const std::string& out, const std::string& name,
                                                              int* rows = nullptr) {
  std::map<long long, std::array<double, 3>> found;
  std::ifstream in(out + "/reactions.csv");
  std::string line;
  std::getline(in, line);  // the header
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::stringstream s(line);
    std::string step, time, boundary, f[3];
    std::getline(s, step, ','), std::getline(s, time, ','), std::getline(s, boundary, ',');
    for (auto& c : f) std::getline(s, c, ',');
    if (boundary == "obstacle:" + name) found[std::stoll(step)] = {std::stod(f[0]), std::stod(f[1]), std::stod(f[2])};
  }
  if (rows) *rows = n;
  return found;
}

/// A step's point fields contact_gap and contact_force, one entry per mesh vertex (a VTU series' pieces share their
/// ghost vertices: merged by position), and the number of points the file has.
struct ContactFields {
  long long file_points = 0;
  int gap_components = 0, force_components = 0;
  std::vector<double> gap;                  ///< per distinct vertex
  std::vector<std::array<double, 3>> force;  ///< per distinct vertex
  std::array<double, 3> total{};            ///< the sum of contact_force over the distinct vertices
};

/// From a .pvtu (one piece per rank: ghost vertices repeated, merged by their reference position).
inline ContactFields vtu_contact_fields(const std::string& pvtu) {
  vtkNew<vtkXMLPUnstructuredGridReader> reader;
  reader->SetFileName(pvtu.c_str());
  reader->Update();
  vtkUnstructuredGrid* grid = reader->GetOutput();
  ContactFields c;
  c.file_points = grid->GetNumberOfPoints();
  vtkDataArray* gap = grid->GetPointData()->GetArray("contact_gap");
  vtkDataArray* force = grid->GetPointData()->GetArray("contact_force");
  if (!gap || !force || gap->GetNumberOfTuples() != c.file_points || force->GetNumberOfTuples() != c.file_points)
    return c;
  c.gap_components = gap->GetNumberOfComponents(), c.force_components = force->GetNumberOfComponents();
  std::map<std::array<double, 3>, int> seen;
  for (vtkIdType p = 0; p < c.file_points; ++p) {
    double x[3];
    grid->GetPoint(p, x);
    if (!seen.emplace(std::array<double, 3>{x[0], x[1], x[2]}, 0).second) continue;
    c.gap.push_back(gap->GetComponent(p, 0));
    std::array<double, 3> f{};
    for (int d = 0; d < 3 && d < c.force_components; ++d) f[d] = force->GetComponent(p, d), c.total[d] += f[d];
    c.force.push_back(f);
  }
  return c;
}

/// A dataset of an HDF5 file as doubles, with its dimensions (empty when missing).
inline std::vector<double> read_h5(const std::string& path, const std::string& dataset, std::vector<hsize_t>& dims) {
  std::vector<double> values;
  dims.clear();
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return values;
  if (H5Lexists(file, dataset.c_str(), H5P_DEFAULT) > 0) {
    const hid_t set = H5Dopen2(file, dataset.c_str(), H5P_DEFAULT);
    const hid_t space = H5Dget_space(set);
    dims.resize(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    hsize_t n = 1;
    for (const hsize_t d : dims) n *= d;
    values.resize(n);
    H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    H5Sclose(space);
    H5Dclose(set);
  }
  H5Fclose(file);
  return values;
}

/// From an XDMF series (out/solution.h5: the mesh's vertices once each), step `step`.
inline ContactFields xdmf_contact_fields(const std::string& out, long long step) {
  char group[32];
  std::snprintf(group, sizeof group, "/Steps/%06lld/", step);
  ContactFields c;
  std::vector<hsize_t> gap_dims, force_dims;
  c.gap = read_h5(out + "/solution.h5", std::string(group) + "contact_gap", gap_dims);
  const std::vector<double> force = read_h5(out + "/solution.h5", std::string(group) + "contact_force", force_dims);
  if (gap_dims.empty() || force_dims.size() != 2) return c;
  c.file_points = static_cast<long long>(gap_dims[0]);
  c.gap_components = gap_dims.size() == 1 ? 1 : static_cast<int>(gap_dims[1]);
  c.force_components = static_cast<int>(force_dims[1]);
  if (c.force_components != 3 || static_cast<long long>(force_dims[0]) != c.file_points) return c;
  for (std::size_t p = 0; p < force_dims[0]; ++p) {
    c.force.push_back({force[3 * p], force[3 * p + 1], force[3 * p + 2]});
    for (int d = 0; d < 3; ++d) c.total[d] += force[3 * p + d];
  }
  return c;
}

}  // namespace edgefem::contact_output_testing
