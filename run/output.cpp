// SPDX-License-Identifier: BSD-3-Clause
#include "run/output.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "partition/collective.hpp"

namespace edgefem {
namespace {

/// Writes `piece` to `path` on a thread of its own. The piece is freed once written, not when the next step's write
/// replaces the future (the lambda lives in the future's state until then): the solve of the next step does not
/// carry it (the memory account, issue 56).
std::future<OutputTimes> write_in_background(const std::string& path, VtuPiece piece) {
  return std::async(std::launch::async, [path, piece = std::move(piece)]() mutable {
    OutputLap lap(true);
    OutputTimes times;
    write_vtu_piece(path, piece);
    lap.lap(times, "writer_vtu");
    piece = VtuPiece{};
    return times;
  });
}

/// Bytes of a piece's arrays.
std::size_t piece_bytes(const VtuPiece& piece) {
  std::size_t b = piece.points.capacity() * sizeof(double) + piece.connectivity.capacity() * sizeof(LocalIndex);
  for (const auto* data : {&piece.point_data, &piece.cell_data})
    for (const DataArray& a : *data)
      b += a.values.capacity() * sizeof(double) + a.int_values.capacity() * sizeof(std::int32_t);
  return b;
}

std::string numbered(const char* pattern, long long n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, n);
  return buf;
}

}  // namespace

ResultWriter::ResultWriter(MPI_Comm comm, std::string directory, const LocalMesh& mesh, const Model& model,
                           const OutputSpec& spec, std::optional<double> resume_after)
    : comm_(comm),
      directory_(std::move(directory)),
      mesh_(mesh),
      model_(model),
      spec_(spec),
      pvd_((std::filesystem::path(directory_) / "solution.pvd").string()) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  run_collectively(comm_, [&] {
    if (rank_ != 0) return;
    std::error_code ec;
    std::filesystem::create_directories(directory_, ec);
    if (ec) throw InputError("output.directory: cannot create '" + directory_ + "': " + ec.message());
    if (resume_after && spec_.format == OutputFormat::vtu) {
      // A restart: keep the steps written up to the checkpoint, drop the later ones (they are recomputed).
      pvd_ = PvdCollection::load(pvd_.path());
      pvd_.truncate_after(*resume_after);
      pvd_.write();
    }
  });
  if (spec_.format == OutputFormat::xdmf)
    xdmf_ = std::make_unique<XdmfSeries>(comm_, directory_, mesh_, model_.nodes_per_cell,
                                         XdmfOptions{.gzip = spec_.gzip, .single = spec_.single_precision},
                                         resume_after);
}

ResultWriter::~ResultWriter() {
  if (pending_.valid()) pending_.wait();
}

void ResultWriter::finish() {
  list_pending();
  if (xdmf_) xdmf_->wait_listed();
}

void ResultWriter::list_pending() {
  if (xdmf_) xdmf_->finish();  // the last step written on its thread, then listed
  if (!pending_.valid()) return;
  std::future<OutputTimes> pending = std::move(pending_);
  OutputLap lap;
  run_collectively(comm_, [&] { times_.merge(pending.get()); });  // the piece's own error, on every rank
  lap.lap(times_, "wait_writer");
  run_collectively(comm_, [&] {
    if (rank_ != 0) return;
    std::vector<std::string> pieces;
    for (int r = 0; r < size_; ++r) pieces.push_back(pending_name_ + "/" + numbered("piece_%05lld.vtu", r));
    const std::string pvtu = pending_name_ + ".pvtu";
    write_pvtu((std::filesystem::path(directory_) / pvtu).string(), pieces, pending_layout_);
    pvd_.add(pending_time_, pvtu);
    pvd_.write();
  });
  lap.lap(times_, "list");
}

OutputTimes ResultWriter::times() const {
  OutputTimes all = times_;
  if (xdmf_) all.merge(xdmf_->times());
  return all;
}

std::vector<DataArray> ResultWriter::point_arrays(std::span<const double> positions, std::span<const double> force,
                                                  std::span<const double> velocity) {
  const std::vector<double>& X = mesh_.mesh.coords;
  std::vector<DataArray> arrays;
  DataArray displacement{"displacement", 3, {}, {}, false};
  displacement.values.resize(X.size());
  for (std::size_t i = 0; i < X.size(); ++i) displacement.values[i] = positions[i] - X[i];
  // push_back, not `= {...}`: an initializer list's elements are const, so the vector would copy every array
  // (the cell tensors: 10 MB per step on a rank of the 136k-tet cantilever, 5 ms).
  arrays.push_back(std::move(displacement));
  arrays.push_back(DataArray{"force", 3, {force.begin(), force.end()}, {}, false});
  if (!velocity.empty()) arrays.push_back(DataArray{"velocity", 3, {velocity.begin(), velocity.end()}, {}, false});
  for (DataArray& extra : extra_points_) arrays.push_back(std::move(extra));
  extra_points_.clear();
  return arrays;
}

bool ResultWriter::wanted(const std::string& field) const {
  return spec_.fields.empty() || std::find(spec_.fields.begin(), spec_.fields.end(), field) != spec_.fields.end();
}

void ResultWriter::add_cell_tensors(std::span<const double> positions, VtuPiece& piece) const {
  const Mesh& m = mesh_.mesh;
  const bool solid = model_.nodes_per_cell == 4;
  const LocalIndex n_cells = solid ? m.n_tets() : m.n_triangles();
  const int n = model_.nodes_per_cell;
  // The tensors are kept as their 6 independent components (DataArray::symmetric: XX, YY, ZZ, XY, YZ, XZ, component
  // after component; the upper triangle, as both formats store it).
  const auto nc = static_cast<std::size_t>(n_cells);
  DataArray strain{"green_strain", 9, std::vector<double>(6 * nc), {}, false, true};
  DataArray stress{"stress", 9, std::vector<double>(6 * nc), {}, false, true};
  DataArray mises{"von_mises", 1, std::vector<double>(static_cast<std::size_t>(n_cells)), {}, false};
  // Tets: J = det F = det(x1-x0, x2-x0, x3-x0) / det(X1-X0, ...) (< 0: inverted; ParaView shows a recovery).
  DataArray volume_ratio{"volume_ratio", 1, std::vector<double>(solid ? static_cast<std::size_t>(n_cells) : 0), {},
                         false};
#pragma omp parallel for schedule(static)
  for (LocalIndex t = 0; t < n_cells; ++t) {
    double X[12], x[12];
    for (int k = 0; k < n; ++k)
      for (int d = 0; d < 3; ++d) {
        const std::size_t i = 3 * static_cast<std::size_t>(piece.cells()[n * static_cast<std::size_t>(t) + k]) + d;
        X[3 * k + d] = m.coords[i];
        x[3 * k + d] = positions[i];
      }
    double E9[9], S9[9];
    // The cell's model says how (materials/registry.hpp).
    const std::int32_t material = model_.cell_material[t];
    const ModelInfo& info = *model_.material_model[static_cast<std::size_t>(material)];
    mises.values[t] = info.strain_stress(X, x, model_.materials, material, E9, S9);
    constexpr int upper[6] = {0, 4, 8, 1, 5, 2};  // XX, YY, ZZ, XY, YZ, XZ of the row-major 3 x 3
    for (std::size_t c = 0; c < 6; ++c) {
      strain.values[c * nc + static_cast<std::size_t>(t)] = E9[upper[c]];
      stress.values[c * nc + static_cast<std::size_t>(t)] = S9[upper[c]];
    }
    if (solid) {
      auto det = [](const double* p) {
        double d[3][3];
        for (int a = 0; a < 3; ++a)
          for (int c = 0; c < 3; ++c) d[a][c] = p[3 * (a + 1) + c] - p[c];
        return d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) - d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
               d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
      };
      volume_ratio.values[t] = det(x) / det(X);
    }
  }
  for (DataArray* a : {&strain, &stress, &mises}) piece.cell_data.push_back(std::move(*a));
  if (solid) piece.cell_data.push_back(std::move(volume_ratio));
}

VtuPiece ResultWriter::make_piece(std::span<const double> positions, std::span<const double> force,
                                  std::span<const double> velocity) {
  const Mesh& m = mesh_.mesh;
  VtuPiece piece;
  const bool solid = model_.nodes_per_cell == 4;
  // The mesh's own arrays, not copies: the mesh outlives the writer's thread (the destructor waits for it).
  piece.points_view = m.coords;
  piece.connectivity_view = solid ? std::span<const LocalIndex>(m.tets) : std::span<const LocalIndex>(m.triangles);
  piece.nodes_per_cell = model_.nodes_per_cell;
  piece.point_data = point_arrays(positions, force, velocity);

  if (wanted("green_strain") || wanted("stress") || wanted("von_mises") || wanted("volume_ratio"))
    add_cell_tensors(positions, piece);
  const std::size_t n_cells = solid ? m.tets.size() / 4 : m.triangles.size() / 3;
  const std::vector<int>& cell_region = solid ? m.tet_region : m.triangle_region;
  piece.cell_data.push_back(DataArray{"rank", 1, {}, std::vector<std::int32_t>(n_cells, rank_), true});
  piece.cell_data.push_back(
      DataArray{"region", 1, {}, std::vector<std::int32_t>(cell_region.begin(), cell_region.end()), true});
  // The arrays in today's order: green_strain, stress, von_mises, rank, region, volume_ratio.
  const auto ratio = std::find_if(piece.cell_data.begin(), piece.cell_data.end(),
                                  [](const DataArray& a) { return a.name == "volume_ratio"; });
  if (ratio != piece.cell_data.end()) std::rotate(ratio, ratio + 1, piece.cell_data.end());
  for (DataArray& extra : extra_cells_) piece.cell_data.push_back(std::move(extra));
  extra_cells_.clear();
  // `output: {fields}`: the arrays not asked for go.
  auto unwanted = [this](const DataArray& a) { return !wanted(a.name); };
  std::erase_if(piece.point_data, unwanted);
  std::erase_if(piece.cell_data, unwanted);
  return piece;
}

void ResultWriter::write(long long step, double time, std::span<const double> positions, std::span<const double> force,
                         std::span<const double> velocity) {
  if (!xdmf_) list_pending();  // the step before: whole on disk, then listed (XDMF: by write_step)
  OutputLap lap;
  ++written_steps_;
  VtuPiece piece = make_piece(positions, force, velocity);
  lap.lap(times_, "arrays");
  if (xdmf_) {
    xdmf_->write_step(step, time, piece);
    return;
  }
  const std::string step_name = numbered("step_%06lld", step);
  const std::string step_dir = (std::filesystem::path(directory_) / step_name).string();
  run_collectively(comm_, [&] {
    if (rank_ != 0) return;
    std::error_code ec;
    std::filesystem::create_directories(step_dir, ec);
    if (ec) throw std::runtime_error("cannot create output directory '" + step_dir + "': " + ec.message());
  });
  lap.lap(times_, "directory");
  pending_layout_ = VtuPiece{};
  for (const DataArray& a : piece.point_data) pending_layout_.point_data.push_back({a.name, a.n_components, {}, {}, a.is_int});
  for (const DataArray& a : piece.cell_data) pending_layout_.cell_data.push_back({a.name, a.n_components, {}, {}, a.is_int});
  pending_name_ = step_name;
  pending_time_ = time;
  const std::string path = (std::filesystem::path(step_dir) / numbered("piece_%05lld.vtu", rank_)).string();
  pending_bytes_ = piece_bytes(piece);
  pending_ = write_in_background(path, std::move(piece));
  lap.lap(times_, "writer_start");
}

std::size_t ResultWriter::pending_bytes() const {
  if (!pending_.valid() || pending_.wait_for(std::chrono::seconds(0)) == std::future_status::ready) return 0;
  return pending_bytes_;
}

void record_output_split(RunSummary& summary, const ResultWriter& writer) {
  summary.output_split = RunSummary::OutputSplit{writer.format_name(), writer.written_steps(), writer.times()};
}

CsvLog::CsvLog(MPI_Comm comm, std::string path, const std::string& header, std::optional<long long> keep_until_step)
    : path_(std::move(path)) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  run_collectively(comm, [&] {
    if (rank != 0) return;
    std::string kept = header + "\n";
    if (keep_until_step) {
      std::ifstream in(path_, std::ios::binary);
      std::string line;
      std::getline(in, line);  // the old header
      const auto columns = std::count(header.begin(), header.end(), ',');
      while (std::getline(in, line)) {
        long long step = -1;
        if (std::sscanf(line.c_str(), "%lld,", &step) == 1 && step >= 0 && step <= *keep_until_step &&
            std::count(line.begin(), line.end(), ',') == columns)
          kept += line + "\n";
      }
    }
    write_file_atomically(path_, kept);
    file_ = std::fopen(path_.c_str(), "a");
    if (!file_) throw std::runtime_error("cannot append to '" + path_ + "'");
  });
}

CsvLog::~CsvLog() {
  if (file_) std::fclose(file_);
}

void CsvLog::row(const std::string& line) {
  if (!file_) return;
  std::fputs(line.c_str(), file_);
  std::fputc('\n', file_);
  std::fflush(file_);
}

ReactionLog::ReactionLog(MPI_Comm comm, const std::string& directory, const Model& model,
                         std::optional<long long> keep_until_step, std::vector<std::string> obstacle_names,
                         bool boundary_rows)
    : comm_(comm),
      model_(model),
      csv_(comm, (std::filesystem::path(directory) / "reactions.csv").string(), "step,time,boundary,fx,fy,fz",
           keep_until_step),
      last_(3 * model.boundary_vertices.size(), 0.0),
      obstacle_names_(std::move(obstacle_names)),
      last_obstacles_(3 * obstacle_names_.size(), 0.0),
      boundary_rows_(boundary_rows) {}

void ReactionLog::record(long long step, double time, std::span<const double> force,
                         std::span<const double> obstacle_force) {
  if (!boundary_rows_) {  // (the frame model's obstacle rows alone)
    record_obstacles(step, time, obstacle_force);
    return;
  }
  std::vector<double> local(last_.size(), 0.0);
  for (std::size_t b = 0; b < model_.boundary_vertices.size(); ++b)
    for (const LocalIndex v : model_.boundary_vertices[b])
      for (int d = 0; d < 3; ++d) local[3 * b + d] += force[3 * static_cast<std::size_t>(v) + d];
  MPI_Allreduce(local.data(), last_.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_SUM, comm_);
  for (std::size_t b = 0; b < model_.boundary_vertices.size(); ++b) {
    char line[256];
    std::snprintf(line, sizeof line, "%lld,%.17g,%zu,%.17g,%.17g,%.17g", step, time, b, last_[3 * b], last_[3 * b + 1],
                  last_[3 * b + 2]);
    csv_.row(line);
  }
  record_obstacles(step, time, obstacle_force);
}

void ReactionLog::record_obstacles(long long step, double time, std::span<const double> obstacle_force) {
  for (std::size_t o = 0; o < obstacle_names_.size() && 3 * o + 2 < obstacle_force.size(); ++o) {
    for (int d = 0; d < 3; ++d) last_obstacles_[3 * o + d] = obstacle_force[3 * o + d];
    char line[320];
    std::snprintf(line, sizeof line, "%lld,%.17g,obstacle:%s,%.17g,%.17g,%.17g", step, time,
                  obstacle_names_[o].c_str(), obstacle_force[3 * o], obstacle_force[3 * o + 1],
                  obstacle_force[3 * o + 2]);
    csv_.row(line);
  }
}

std::vector<std::string> obstacle_names(const Job& job) {
  std::vector<std::string> names;
  for (const ObstacleSpec& o : job.obstacles) names.push_back(o.name);
  return names;
}

void add_contact_fields(ResultWriter& writer, ContactTerms& contact, Vec x, std::span<const double> x_local) {
  std::vector<double> gap, force;
  contact.vertex_fields(x, x_local, gap, force);
  add_contact_fields(writer, std::move(gap), std::move(force));
}

void add_contact_fields(ResultWriter& writer, std::vector<double> gap, std::vector<double> force) {
  writer.add_point_field("contact_gap", 1, std::move(gap));
  writer.add_point_field("contact_force", 3, std::move(force));
}

}  // namespace edgefem
