#include "solver/output.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "partition/collective.hpp"

namespace edgefem {
namespace {

std::string numbered(const char* pattern, long long n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, n);
  return buf;
}

/// von Mises equivalent of the Cauchy stress sigma = F S F^T / J.
double von_mises(const double* F, const std::array<double, 9>& S) {
  double FS[9] = {}, sigma[9] = {};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) FS[3 * i + j] += F[3 * i + k] * S[3 * k + j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) sigma[3 * i + j] += FS[3 * i + k] * F[3 * j + k];
  const double J = F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) +
                   F[2] * (F[3] * F[7] - F[4] * F[6]);
  for (double& s : sigma) s /= J;
  const double dxy = sigma[0] - sigma[4], dyz = sigma[4] - sigma[8], dzx = sigma[8] - sigma[0];
  return std::sqrt(0.5 * (dxy * dxy + dyz * dyz + dzx * dzx) +
                   3.0 * (sigma[1] * sigma[1] + sigma[5] * sigma[5] + sigma[2] * sigma[2]));
}

/// Deformation gradient of a tet from reference and current vertex positions (12 doubles each).
void deformation_gradient(const double* X, const double* x, double* F) {
  double Dm[9], Ds[9];
  for (int k = 0; k < 3; ++k)
    for (int d = 0; d < 3; ++d) {
      Dm[3 * d + k] = X[3 * (k + 1) + d] - X[d];
      Ds[3 * d + k] = x[3 * (k + 1) + d] - x[d];
    }
  const double det = Dm[0] * (Dm[4] * Dm[8] - Dm[5] * Dm[7]) - Dm[1] * (Dm[3] * Dm[8] - Dm[5] * Dm[6]) +
                     Dm[2] * (Dm[3] * Dm[7] - Dm[4] * Dm[6]);
  const double inv[9] = {(Dm[4] * Dm[8] - Dm[5] * Dm[7]) / det, (Dm[2] * Dm[7] - Dm[1] * Dm[8]) / det,
                         (Dm[1] * Dm[5] - Dm[2] * Dm[4]) / det, (Dm[5] * Dm[6] - Dm[3] * Dm[8]) / det,
                         (Dm[0] * Dm[8] - Dm[2] * Dm[6]) / det, (Dm[2] * Dm[3] - Dm[0] * Dm[5]) / det,
                         (Dm[3] * Dm[7] - Dm[4] * Dm[6]) / det, (Dm[1] * Dm[6] - Dm[0] * Dm[7]) / det,
                         (Dm[0] * Dm[4] - Dm[1] * Dm[3]) / det};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      F[3 * i + j] = 0;
      for (int k = 0; k < 3; ++k) F[3 * i + j] += Ds[3 * i + k] * inv[3 * k + j];
    }
}

}  // namespace

ResultWriter::ResultWriter(MPI_Comm comm, std::string directory, const LocalMesh& mesh, const Model& model,
                           std::optional<double> resume_after)
    : comm_(comm), directory_(std::move(directory)), mesh_(mesh), model_(model),
      pvd_((std::filesystem::path(directory_) / "solution.pvd").string()) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  run_collectively(comm_, [&] {
    if (rank_ != 0) return;
    std::error_code ec;
    std::filesystem::create_directories(directory_, ec);
    if (ec) throw InputError("output.directory: cannot create '" + directory_ + "': " + ec.message());
    if (resume_after) {
      // A restart: keep the steps written up to the checkpoint, drop the later ones (they are recomputed).
      pvd_ = PvdCollection::load(pvd_.path());
      pvd_.truncate_after(*resume_after);
      pvd_.write();
    }
  });
}

void ResultWriter::write(long long step, double time, std::span<const double> positions, std::span<const double> force,
                         std::span<const double> velocity) {
  const std::string step_name = numbered("step_%06lld", step);
  const std::string step_dir = (std::filesystem::path(directory_) / step_name).string();
  run_collectively(comm_, [&] {
    if (rank_ != 0) return;
    std::error_code ec;
    std::filesystem::create_directories(step_dir, ec);
    if (ec) throw std::runtime_error("cannot create output directory '" + step_dir + "': " + ec.message());
  });

  const Mesh& m = mesh_.mesh;
  VtuPiece piece;
  piece.points = m.coords;
  piece.connectivity = m.tets;
  piece.nodes_per_cell = 4;
  DataArray displacement{"displacement", 3, {}, {}, false};
  displacement.values.resize(m.coords.size());
  for (std::size_t i = 0; i < m.coords.size(); ++i) displacement.values[i] = positions[i] - m.coords[i];
  DataArray force_array{"force", 3, {force.begin(), force.end()}, {}, false};
  piece.point_data = {std::move(displacement), std::move(force_array)};
  if (!velocity.empty()) piece.point_data.push_back(DataArray{"velocity", 3, {velocity.begin(), velocity.end()}, {}, false});

  const LocalIndex n_tets = m.n_tets();
  DataArray strain{"green_strain", 9, std::vector<double>(9 * static_cast<std::size_t>(n_tets)), {}, false};
  DataArray stress{"stress", 9, std::vector<double>(9 * static_cast<std::size_t>(n_tets)), {}, false};
  DataArray mises{"von_mises", 1, std::vector<double>(static_cast<std::size_t>(n_tets)), {}, false};
  DataArray rank_array{"rank", 1, {}, std::vector<std::int32_t>(static_cast<std::size_t>(n_tets), rank_), true};
  DataArray region{"region", 1, {}, std::vector<std::int32_t>(m.tet_region.begin(), m.tet_region.end()), true};
#pragma omp parallel for schedule(static)
  for (LocalIndex t = 0; t < n_tets; ++t) {
    double X[12], x[12], F[9];
    for (int k = 0; k < 4; ++k)
      for (int d = 0; d < 3; ++d) {
        const std::size_t i = 3 * static_cast<std::size_t>(m.tets[4 * static_cast<std::size_t>(t) + k]) + d;
        X[3 * k + d] = m.coords[i];
        x[3 * k + d] = positions[i];
      }
    std::array<double, 9> E{}, S{};
    tet_strain_stress(X, x, model_.material_table[model_.cell_material[t]], E, S);
    deformation_gradient(X, x, F);
    std::copy(E.begin(), E.end(), strain.values.begin() + 9 * static_cast<std::ptrdiff_t>(t));
    std::copy(S.begin(), S.end(), stress.values.begin() + 9 * static_cast<std::ptrdiff_t>(t));
    mises.values[t] = von_mises(F, S);
  }
  piece.cell_data = {std::move(strain), std::move(stress), std::move(mises), std::move(rank_array), std::move(region)};

  const std::string piece_name = numbered("piece_%05lld.vtu", rank_);
  run_collectively(comm_, [&] { write_vtu_piece((std::filesystem::path(step_dir) / piece_name).string(), piece); });
  run_collectively(comm_, [&] {
    if (rank_ != 0) return;
    std::vector<std::string> pieces;
    for (int r = 0; r < size_; ++r) pieces.push_back(step_name + "/" + numbered("piece_%05lld.vtu", r));
    const std::string pvtu = step_name + ".pvtu";
    write_pvtu((std::filesystem::path(directory_) / pvtu).string(), pieces, piece);
    pvd_.add(time, pvtu);
    pvd_.write();
  });
}

}  // namespace edgefem
