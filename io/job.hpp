#pragma once
/// \file job.hpp
/// The typed job description parsed from YAML (contract in shared/DESIGN.md, "Job file").
/// Every path in a Job is already resolved relative to the job file's directory.
#include <array>
#include <optional>
#include <string>
#include <vector>

namespace edgefem {

/// Which vertices (or boundary facets, for tractions) a condition applies to.
struct Selection {
  enum class Kind { region, box, all };
  Kind kind = Kind::all;
  int region = 0;                       ///< Kind::region: Gmsh physical tag
  std::array<double, 3> lo{}, hi{};     ///< Kind::box: closed box [lo, hi]
  int line = 0;                         ///< line of the selection in the job file (0 if not from a file)
};

/// Transversely isotropic elasticity (fibre-reinforced): axis of symmetry = the fibre direction.
struct TransverseIsotropySpec {
  std::array<double, 3> fibre{1, 0, 0}; ///< fibre direction (normalised by the reader)
  double young_fibre = 0.0;             ///< E_f: Young's modulus along the fibre
  double young_transverse = 0.0;        ///< E_t: Young's modulus across the fibre
  double shear_fibre = 0.0;             ///< G_ft: shear modulus in planes containing the fibre
  double poisson_fibre = 0.0;           ///< nu_ft: transverse contraction / fibre extension under fibre load
  double poisson_transverse = 0.0;      ///< nu_tt: Poisson ratio within the transverse plane
};

struct MaterialSpec {
  std::optional<int> region;            ///< empty = every cell
  std::string model = "stvk";           ///< stvk | stvk-nsn | stvk-tl | linear
  double young = 0.0;                   ///< isotropic (ignored when `anisotropy` is set)
  double poisson = 0.0;
  std::optional<TransverseIsotropySpec> anisotropy;
  double density = 1.0;
  bool volumetric_penalty = true;       ///< false = volumetric "none"; kept for the `volumetric_penalty` key
  /// Volumetric penalty: "cubic" = Kikuuwe §4, psi = K_vol |min(0, J-1)|^3 / 3 (only under compression);
  /// "quadratic" = K_vol (J-1)^2 / 2; "none". K_vol = 3/4 of the (Voigt) bulk modulus = E/(4(1-2nu)).
  std::string volumetric = "cubic";
  double thickness = 1.0;               ///< membranes only
  int line = 0;                         ///< line of the entry in the job file (0 if not from a file)
};

/// A prescribed rigid rotation of the selected vertices: x = c + R(s * angle) (X - c) at load factor s.
struct RotationSpec {
  std::array<double, 3> axis{0, 0, 1};    ///< rotation axis (normalised by the reader), right-hand rule
  std::array<double, 3> center{0, 0, 0};  ///< a point on the axis
  double angle_degrees = 0.0;             ///< at load factor 1
  std::array<bool, 3> components{true, true, true};  ///< the components it prescribes (others stay free)
};

struct BoundarySpec {
  Selection select;
  std::array<bool, 3> fix{false, false, false};          ///< components held at their initial value
  std::array<std::optional<double>, 3> displace{};       ///< prescribed displacement per component, ramped
  std::optional<RotationSpec> rotate;                    ///< prescribed rotation, ramped by angle
};

struct TractionSpec {
  Selection select;
  std::array<double, 3> traction{};     ///< nominal: force per unit reference area (or length)
};

struct LoadSpec {
  std::array<double, 3> gravity{};      ///< acceleration; force = density * volume * gravity
  std::vector<TractionSpec> tractions;
};

struct GenerateSpec {
  std::string shape;                    ///< "box" (tets) | "sheet" (triangles)
  std::array<double, 3> size{1, 1, 1};
  std::array<int, 3> cells{1, 1, 1};
};

struct Job {
  std::string job_file;                 ///< path of the YAML file itself
  std::string job_dir;                  ///< directory the relative paths were resolved against
  std::optional<std::string> mesh_file; ///< resolved path, or empty when generated
  std::optional<GenerateSpec> generate;
  std::vector<MaterialSpec> materials;
  std::vector<BoundarySpec> boundary;
  LoadSpec loads;
  std::string analysis_type = "static";
  int steps = 1;                        ///< static load steps
  double newton_rtol = 1e-10;
  double newton_atol = 1e-12;
  int newton_max_it = 30;
  std::string petsc_options;            ///< extra PETSc options; the command line wins
  std::string output_directory;         ///< resolved
  int output_every = 1;
};

/// Parse and validate a job file. Throws InputError naming file, line and key on any problem:
/// unknown key, wrong type, missing required key, out-of-range value, mesh file that does not exist.
Job read_job(const std::string& path);

}  // namespace edgefem
