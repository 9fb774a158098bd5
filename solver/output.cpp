#include "solver/output.hpp"

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "partition/collective.hpp"

namespace edgefem {
namespace {

std::string numbered(const char* pattern, long long n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, n);
  return buf;
}

/// von Mises equivalent of a (symmetric, row-major) stress.
double von_mises_of(const double* sigma) {
  const double dxy = sigma[0] - sigma[4], dyz = sigma[4] - sigma[8], dzx = sigma[8] - sigma[0];
  return std::sqrt(0.5 * (dxy * dxy + dyz * dyz + dzx * dzx) +
                   3.0 * (sigma[1] * sigma[1] + sigma[5] * sigma[5] + sigma[2] * sigma[2]));
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
  for (double& x : sigma) x /= J;
  return von_mises_of(sigma);
}

/// Membrane triangle (X, x: 9 doubles): Green strain and plane-stress StVK 2nd Piola-Kirchhoff stress of the
/// in-plane deformation, as 3x3 tensors in the reference basis (zero normal components), and the von Mises
/// value of the Cauchy stress F S F^T / J with J the area ratio (the thickness change is not modelled).
double membrane_strain_stress(const double* X, const double* x, const MembraneMaterial& m, double* E3, double* S3) {
  double e1[3], e2[3], d1[3], d2[3], n[3];
  for (int k = 0; k < 3; ++k) e1[k] = X[3 + k] - X[k], e2[k] = X[6 + k] - X[k], d1[k] = x[3 + k] - x[k], d2[k] = x[6 + k] - x[k];
  n[0] = e1[1] * e2[2] - e1[2] * e2[1], n[1] = e1[2] * e2[0] - e1[0] * e2[2], n[2] = e1[0] * e2[1] - e1[1] * e2[0];
  const double l1 = std::sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2]);
  const double ln = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  double t1[3], t2[3];
  for (int k = 0; k < 3; ++k) t1[k] = e1[k] / l1, n[k] /= ln;
  t2[0] = n[1] * t1[2] - n[2] * t1[1], t2[1] = n[2] * t1[0] - n[0] * t1[2], t2[2] = n[0] * t1[1] - n[1] * t1[0];
  auto dot = [](const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; };
  // D = [e1 e2] in the (t1, t2) basis; F = [d1 d2] D^-1 (3 x 2).
  const double D[4] = {dot(t1, e1), dot(t1, e2), dot(t2, e1), dot(t2, e2)};
  const double det = D[0] * D[3] - D[1] * D[2];
  const double Di[4] = {D[3] / det, -D[1] / det, -D[2] / det, D[0] / det};
  double F[3][2];
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 2; ++j) F[k][j] = d1[k] * Di[j] + d2[k] * Di[2 + j];
  double E[2][2], S[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) E[i][j] = 0.5 * (F[0][i] * F[0][j] + F[1][i] * F[1][j] + F[2][i] * F[2][j] - (i == j));
  const double lambda = m.young * m.poisson / (1.0 - m.poisson * m.poisson), mu = m.young / (2.0 * (1.0 + m.poisson));
  const double trace = E[0][0] + E[1][1];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) S[i][j] = lambda * trace * (i == j) + 2.0 * mu * E[i][j];
  const double* T[2] = {t1, t2};
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      E3[3 * a + b] = S3[3 * a + b] = 0.0;
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
          E3[3 * a + b] += T[i][a] * E[i][j] * T[j][b];
          S3[3 * a + b] += T[i][a] * S[i][j] * T[j][b];
        }
    }
  const double c[3] = {F[1][0] * F[2][1] - F[2][0] * F[1][1], F[2][0] * F[0][1] - F[0][0] * F[2][1],
                       F[0][0] * F[1][1] - F[1][0] * F[0][1]};
  const double J = std::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
  double sigma[9];
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      sigma[3 * a + b] = 0.0;
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) sigma[3 * a + b] += F[a][i] * S[i][j] * F[b][j];
      sigma[3 * a + b] /= J;
    }
  return von_mises_of(sigma);
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

/// Volino triangle: strain (8) and stress sigma(eps) in the weft/warp frame, as 3x3 tensors in the reference
/// basis (engineering shear halved for the tensor); returns the von Mises value of that in-plane stress.
double volino_strain_stress(const double* X, const double* x, const VolinoMaterial& m, double* E3, double* S3) {
  const VolinoTriangle ref = volino_reference(std::span<const double, 9>(X, 9), m.warp);
  VolinoElement element;
  volino_element(ref, m, std::span<const double, 9>(x, 9), VolinoStabilization::none, false, element);
  const auto& u = ref.weft;
  const auto& w = ref.warp;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      const double uu = u[a] * u[b], ww = w[a] * w[b], uw = u[a] * w[b] + w[a] * u[b];
      E3[3 * a + b] = element.strain[0] * uu + element.strain[1] * ww + 0.5 * element.strain[2] * uw;
      S3[3 * a + b] = element.stress[0] * uu + element.stress[1] * ww + element.stress[2] * uw;
    }
  return von_mises_of(S3);
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
  const bool solid = model_.nodes_per_cell == 4;
  piece.connectivity = solid ? m.tets : m.triangles;
  piece.nodes_per_cell = model_.nodes_per_cell;
  DataArray displacement{"displacement", 3, {}, {}, false};
  displacement.values.resize(m.coords.size());
  for (std::size_t i = 0; i < m.coords.size(); ++i) displacement.values[i] = positions[i] - m.coords[i];
  DataArray force_array{"force", 3, {force.begin(), force.end()}, {}, false};
  piece.point_data = {std::move(displacement), std::move(force_array)};
  if (!velocity.empty()) piece.point_data.push_back(DataArray{"velocity", 3, {velocity.begin(), velocity.end()}, {}, false});

  const LocalIndex n_cells = solid ? m.n_tets() : m.n_triangles();
  const int n = model_.nodes_per_cell;
  DataArray strain{"green_strain", 9, std::vector<double>(9 * static_cast<std::size_t>(n_cells)), {}, false};
  DataArray stress{"stress", 9, std::vector<double>(9 * static_cast<std::size_t>(n_cells)), {}, false};
  DataArray mises{"von_mises", 1, std::vector<double>(static_cast<std::size_t>(n_cells)), {}, false};
  DataArray rank_array{"rank", 1, {}, std::vector<std::int32_t>(static_cast<std::size_t>(n_cells), rank_), true};
  const std::vector<int>& cell_region = solid ? m.tet_region : m.triangle_region;
  DataArray region{"region", 1, {}, std::vector<std::int32_t>(cell_region.begin(), cell_region.end()), true};
#pragma omp parallel for schedule(static)
  for (LocalIndex t = 0; t < n_cells; ++t) {
    double X[12], x[12], F[9];
    for (int k = 0; k < n; ++k)
      for (int d = 0; d < 3; ++d) {
        const std::size_t i = 3 * static_cast<std::size_t>(piece.connectivity[n * static_cast<std::size_t>(t) + k]) + d;
        X[3 * k + d] = m.coords[i];
        x[3 * k + d] = positions[i];
      }
    double* E = strain.values.data() + 9 * static_cast<std::ptrdiff_t>(t);
    double* S = stress.values.data() + 9 * static_cast<std::ptrdiff_t>(t);
    if (!solid) {
      const auto material = static_cast<std::size_t>(model_.cell_material[t]);
      mises.values[t] = model_.material_model[material] == "volino"
                            ? volino_strain_stress(X, x, model_.volino_table[material], E, S)
                            : membrane_strain_stress(X, x, model_.membrane_table[material], E, S);
      continue;
    }
    std::array<double, 9> Et{}, St{};
    tet_strain_stress(X, x, model_.material_table[model_.cell_material[t]], Et, St);
    deformation_gradient(X, x, F);
    std::copy(Et.begin(), Et.end(), E);
    std::copy(St.begin(), St.end(), S);
    mises.values[t] = von_mises(F, St);
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
                         std::optional<long long> keep_until_step)
    : comm_(comm),
      model_(model),
      csv_(comm, (std::filesystem::path(directory) / "reactions.csv").string(), "step,time,boundary,fx,fy,fz",
           keep_until_step),
      last_(3 * model.boundary_vertices.size(), 0.0) {}

void ReactionLog::record(long long step, double time, std::span<const double> force) {
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
}

}  // namespace edgefem
