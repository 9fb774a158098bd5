// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file job.hpp
/// The typed job description parsed from YAML (contract in docs/theory/design.md, "Job contract").
/// Every path in a Job is already resolved relative to the job file's directory, and every choice is parsed into
/// an enum (or a model registry entry): nothing downstream compares option strings.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "contact/contact_method.hpp"
#include "materials/plasticity.hpp"
#include "materials/registry.hpp"

namespace edgefem {

/// `mesh.generate.shape`: a box of tetrahedra or a flat sheet of triangles.
enum class GeneratedShape : std::uint8_t { box, sheet };
/// `analysis.type`.
enum class AnalysisType : std::uint8_t { statics, dynamics };
/// `analysis.integrator` (dynamic_solver.hpp).
/// position_based: Bender et al. 2014 energy constraints (pbd/pbd_solver.hpp), no Newton.
enum class Integrator : std::uint8_t { backward_euler, linearized_euler, newmark, position_based };
/// `analysis.position_based.sweep`: graph-coloured Gauss-Seidel or Jacobi with averaging.
enum class PbdSweep : std::uint8_t { colored, jacobi };
/// `analysis.mass`.
enum class MassMatrix : std::uint8_t { lumped, consistent };
/// `analysis.initial_state`: the reference configuration, or the static equilibrium at t = 0 (at rest).
enum class InitialState : std::uint8_t { rest, static_equilibrium };

/// `partition.method`: the cell partitioner. `automatic` (the key absent): METIS on rank 0 below
/// kPtScotchMinCells cells (run/load_mesh.hpp), PT-Scotch on the distributed dual graph from there on.
enum class PartitionMethod : std::uint8_t { automatic, metis, ptscotch };
/// `discretization.type`: mesh vertices as unknowns (every model), or rigid frames driving the tet mesh
/// (Gilles et al. 2011; frames/frames_solver.hpp).
enum class DiscretizationType : std::uint8_t { nodes, frames };
/// `discretization.weights`: per-vertex frame weights from a Laplace solve (1 at the frame's vertex, 0 at the other
/// frames' vertices), hat functions along the path through the frames (in the order given or placed), or the
/// frames' Voronoi cells diffused by implicit heat steps (frames/laplace_weights.hpp).
enum class FrameWeights : std::uint8_t { harmonic, hat, diffused };
/// `discretization.frame_type`: rigid frames (6 dofs, dual-quaternion blend; Gilles et al. 2011) or affine frames
/// (12 dofs, linear blend; Faure et al. 2011).
enum class FrameType : std::uint8_t { rigid, affine };
/// `discretization.placement` of `frames: N`: farthest-point sampling over the vertices, or k-means (Lloyd) over the
/// tet centroids weighted by volume; both start with a frame on each fixed region.
enum class FramePlacementRule : std::uint8_t { farthest, kmeans };
/// `discretization.frame_mass`: the frames' lumped masses (dynamics). blocks: Gilles et al.'s Eq. 6 with the cross
/// terms dropped, M_i = sum m J_i^T J_i (J_i carries w_i: the translational masses sum to sum m w_i^2, less than
/// the body's mass wherever weights overlap); weighted: M_i = sum m w_i (J_i / w_i)^T (J_i / w_i), the row-sum
/// lumping of the weights (they sum to 1), so the translational masses sum to the body's mass and a free body
/// falls at g (the default; blocks reproduces the paper).
enum class FrameMass : std::uint8_t { blocks, weighted };

/// The job file's spelling of each choice (messages, checkpoints, reports).
std::string_view to_string(GeneratedShape shape);
std::string_view to_string(PartitionMethod method);
std::string_view to_string(AnalysisType type);
std::string_view to_string(Integrator integrator);
std::string_view to_string(PbdSweep sweep);
std::string_view to_string(MassMatrix mass);
std::string_view to_string(InitialState state);
std::string_view to_string(VolumetricPenalty volumetric);
std::string_view to_string(DiscretizationType type);
std::string_view to_string(FrameWeights weights);
std::string_view to_string(FrameType type);
std::string_view to_string(FrameMass mass);
std::string_view to_string(FramePlacementRule rule);

/// Which vertices (or boundary facets, for tractions) a condition applies to.
struct Selection {
  enum class Kind { region, box, all, points };
  Kind kind = Kind::all;
  int region = 0;                    ///< Kind::region: Gmsh physical tag
  std::array<double, 3> lo{}, hi{};  ///< Kind::box: closed box [lo, hi]
  /// Kind::points (`point: [x, y, z]` or `points: [[x, y, z], ...]`): for each point the mesh vertex nearest to it
  /// (over all ranks; equal distances: the smaller vertex index of the mesh file).
  std::vector<std::array<double, 3>> points;
  int line = 0;                      ///< line of the selection in the job file (0 if not from a file)
};

/// Transversely isotropic elasticity (fibre-reinforced): axis of symmetry = the fibre direction.
struct TransverseIsotropySpec {
  std::array<double, 3> fibre{1, 0, 0};  ///< fibre direction (normalised by the reader)
  double young_fibre = 0.0;              ///< E_f: Young's modulus along the fibre
  double young_transverse = 0.0;         ///< E_t: Young's modulus across the fibre
  double shear_fibre = 0.0;              ///< G_ft: shear modulus in planes containing the fibre
  double poisson_fibre = 0.0;            ///< nu_ft: transverse contraction / fibre extension under fibre load
  double poisson_transverse = 0.0;       ///< nu_tt: Poisson ratio within the transverse plane
};

/// A strain-stress curve of Volino's model: (strain, stress) rows from the job or a CSV file (read when the
/// model is built).
struct CurveSpec {
  std::vector<std::array<double, 2>> points;  ///< when given in the job
  std::string file;                           ///< resolved path, when given as a file name
  int line = 0;
};

/// `model: volino` (Volino et al. 2009): warp direction, and a law (isotropic young/poisson, orthotropic, or
/// nonlinear curves per mode).
struct VolinoSpec {
  std::array<double, 3> warp_direction{0, 1, 0};     ///< projected into each triangle's plane
  double warp_angle_degrees = 0.0;                   ///< then turned about the normal (counter-clockwise about +z)
  std::optional<std::array<double, 4>> orthotropic;  ///< E_weft, E_warp, G (shear), nu (weft-warp coupling)
  std::optional<std::array<CurveSpec, 3>> curves;    ///< weft, warp, shear
  VolinoStabilization stabilization = VolinoStabilization::none;  ///< none | clamp | eigen-clamp (geometric term)
  std::array<double, 3> viscosity{};  ///< diagonal of E' (weft, warp, shear): sigma' = E' d(eps)/dt
};

struct MaterialSpec {
  std::optional<int> region;                      ///< empty = every cell
  const ModelInfo* model = &model_named("stvk");  ///< the registry's entry (materials/registry.hpp); never null
  double young = 0.0;                             ///< isotropic (ignored when `anisotropy` is set)
  double poisson = 0.0;
  std::optional<TransverseIsotropySpec> anisotropy;
  double density = 1.0;
  bool volumetric_penalty = true;  ///< false = volumetric "none"; kept for the `volumetric_penalty` key
  /// Volumetric penalty: "cubic" = Kikuuwe §4, psi = K_vol |min(0, J-1)|^3 / 3 (only under compression);
  /// "quadratic" = K_vol (J-1)^2 / 2; "none". K_vol = 3/4 of the (Voigt) bulk modulus = E/(4(1-2nu)).
  VolumetricPenalty volumetric = VolumetricPenalty::cubic;
  double thickness = 1.0;            ///< membranes only
  std::optional<VolinoSpec> volino;  ///< model volino only
  /// Delingette's damped springs (trbs, trqs, springs; dynamics): zeta (time) in the damped elongations.
  double spring_damping = 0.0;
  /// Membranes: Bergou's isometric bending stiffness kb (`bending: {stiffness: kb}`, materials/bending.hpp); 0 = none.
  double bending_stiffness = 0.0;
  /// Tets, integrator position-based: `plasticity: {yield, creep, max}` (materials/plasticity.hpp); empty = elastic.
  std::optional<PlasticLaw> plasticity;
  int plasticity_line = 0;  ///< line of the plasticity key (0 if none)
  int line = 0;             ///< line of the entry in the job file (0 if not from a file)
};

/// A scalar factor s(t), piecewise linear through `points` (time strictly increasing), constant before the
/// first and after the last point. Job syntax: `schedule: {ramp: [t0, t1]}` (= points (t0, 0), (t1, 1)) or
/// `schedule: {table: [[t, s], ...]}` (at least one point). A static analysis evaluates it at the load
/// factor (its pseudo-time runs from 0 to 1 over the load steps).
struct Schedule {
  std::vector<std::array<double, 2>> points;  ///< (time, factor)
  int line = 0;
  [[nodiscard]] double operator()(double t) const;
};

/// A prescribed rigid rotation of the selected vertices: x = c + R(s * angle) (X - c) at load factor s.
struct RotationSpec {
  std::array<double, 3> axis{0, 0, 1};               ///< rotation axis (normalised by the reader), right-hand rule
  std::array<double, 3> center{0, 0, 0};             ///< a point on the axis
  double angle_degrees = 0.0;                        ///< at load factor 1
  std::array<bool, 3> components{true, true, true};  ///< the components it prescribes (others stay free)
};

struct BoundarySpec {
  Selection select;
  std::array<bool, 3> fix{false, false, false};     ///< components held at their initial value
  std::array<std::optional<double>, 3> displace{};  ///< prescribed displacement per component, ramped
  std::optional<RotationSpec> rotate;               ///< prescribed rotation, ramped by angle
  /// Factor on `displace` and `rotate` over time. Empty: the load factor (static), or a linear ramp from 0 at
  /// t = 0 to 1 at end_time (dynamic).
  std::optional<Schedule> schedule;
};

/// Penalty attachment (Kikuuwe §5.1): every selected vertex v is tied to its own anchor a_v(t) = X_v + d(t)
/// by a spring and a damper: h_v = -stiffness (x_v - a_v) - damping (v_v - a_v'). The anchor displacement
/// d(t) is zero (fixed anchor), piecewise linear through `path` rows (t, dx, dy, dz) (constant outside), or
/// velocity * t. Static analyses evaluate d at the load factor and ignore the damper.
struct AttachmentSpec {
  Selection select;
  double stiffness = 0.0;                         ///< force per unit length, per vertex (> 0)
  double damping = 0.0;                           ///< force per unit velocity, per vertex (>= 0)
  std::vector<std::array<double, 4>> path;        ///< (t, dx, dy, dz), time strictly increasing
  std::optional<std::array<double, 3>> velocity;  ///< constant anchor velocity (exclusive with path)
  int line = 0;
  /// Anchor displacement d(t) and its rate d'(t) (the slope of the path segment containing t).
  [[nodiscard]] std::array<double, 3> displacement(double t) const;
  [[nodiscard]] std::array<double, 3> rate(double t) const;
};

struct TractionSpec {
  Selection select;
  std::array<double, 3> traction{};  ///< nominal: force per unit reference area (or length)
  /// Factor over time. Empty: the load factor (static), or 1 at every time (dynamic).
  std::optional<Schedule> schedule;
};

struct LoadSpec {
  std::array<double, 3> gravity{};  ///< acceleration; force = density * volume * gravity
  std::vector<TractionSpec> tractions;
};

struct GenerateSpec {
  GeneratedShape shape = GeneratedShape::box;  ///< box (tets) | sheet (triangles)
  std::array<double, 3> size{1, 1, 1};
  std::array<int, 3> cells{1, 1, 1};
};

/// `analysis.position_based.inversion`: svd = Bender et al. §4.2 (materials/tet_inversion.hpp), none = the plain
/// element energy (StVK then cannot see mirrored or flattened tets).
enum class PbdInversion : std::uint8_t { svd, none };
/// `analysis.initial_state` of integrator position-based: the reference shape, all vertices projected onto the
/// mid-plane of the bounding box normal to an axis (flatten), or mirrored about it (mirror: every tet inverted).
enum class PbdInitialShape : std::uint8_t { rest, flatten, mirror };

/// `analysis.position_based.acceleration`: none, or Chebyshev's semi-iterative method (Wang 2015) on the coloured
/// XPBD sweeps with the given spectral_radius (pbd/pbd_chebyshev.hpp).
enum class PbdAcceleration : std::uint8_t { none, chebyshev };
std::string_view to_string(PbdAcceleration acceleration);

/// `analysis.position_based:` (integrator position-based only).
struct PositionBasedSpec {
  int iterations = 5;                  ///< constraint sweeps per step (>= 1)
  PbdSweep sweep = PbdSweep::colored;  ///< colored Gauss-Seidel (rank-count independent) | jacobi (averaged)
  bool xpbd = true;                    ///< compliance 1/(k dt^2) from the material; false = Bender's E = 0
  double velocity_damping = 0.0;       ///< v <- (1 - velocity_damping) v after each step, in [0, 1)
  PbdInversion inversion = PbdInversion::svd;
  PbdAcceleration acceleration = PbdAcceleration::none;
  double spectral_radius = 0.0;  ///< acceleration chebyshev: the sweep's estimated spectral radius, in (0, 1)
  PbdInitialShape initial_shape = PbdInitialShape::rest;  ///< `analysis.initial_state: {flatten|mirror: axis}`
  int initial_axis = 0;                                   ///< 0, 1, 2 = x, y, z (flatten / mirror)
};

/// `analysis: {type: dynamic, dynamic: {...}}`.
struct DynamicSpec {
  double dt = 0.0;        ///< time step (> 0)
  double end_time = 0.0;  ///< > 0; the number of steps is round(end_time / dt)
  Integrator integrator = Integrator::backward_euler;
  double damping_mass = 0.0;       ///< Rayleigh alpha (1/time): B = alpha M + beta K
  double damping_stiffness = 0.0;  ///< Rayleigh beta (time)
  MassMatrix mass = MassMatrix::lumped;
  int max_step_cuts = 6;                     ///< halvings of dt allowed within one step before giving up
  std::array<double, 3> initial_velocity{};  ///< uniform initial velocity
  /// rest: start at the reference configuration; static: start from the static equilibrium under the
  /// loads and prescribed displacements at t = 0 (solved in `analysis.steps` load steps), at rest.
  InitialState initial_state = InitialState::rest;
  PositionBasedSpec position_based;  ///< integrator position-based only
};

/// `solver:` — the Newton–Krylov strategy (docs/theory/solver.md). PETSc options given in `solver.petsc` or on the
/// command line override each part.
struct SolverSpec {
  /// First iterate of a step. `extrapolate`: static load steps extrapolate the converged states (the secant through
  /// the last two, the parabola through the last three); backward Euler extrapolates the velocity with the last
  /// step's change. `none`: the last converged state (static), the integrator's own predictor x_n + h v_n
  /// (+ h^2/2 a_n for Newmark, which keeps it either way: extrapolating its undamped accelerations does not pay).
  enum class Predictor { extrapolate, none };
  /// `full`: the full Newton step, unless its residual is not finite (halved until it is) or it lands more than
  /// ten times past the energy's critical point along the step (then the secant step length); `cp`, `bt`,
  /// `basic`: PETSc's line searches.
  enum class LineSearch { full, cp, bt, basic };
  /// Linear solve tolerance per Newton iteration: Eisenstat–Walker forcing terms, or `linear.rtol` always.
  enum class Forcing { eisenstat_walker, fixed };
  /// `auto`: additive Schwarz/ICC(2) for dynamic membranes; otherwise a sparse direct factorization (MUMPS Cholesky)
  /// up to `direct_max_dofs` unknowns and GAMG above.
  enum class Preconditioner { automatic, gamg, hypre, direct, block_jacobi, schwarz };
  /// GAMG's prolongation: `smoothed` aggregation (PETSc's default; fewer CG iterations on bending problems, but
  /// Galerkin products denser than the fine matrix), `unsmoothed` (a fraction of the memory and set-up), `auto`:
  /// smoothed unless the memory estimate says it would not fit (run/memory_budget.hpp).
  enum class Aggregation { automatic, smoothed, unsmoothed };
  Predictor predictor = Predictor::extrapolate;
  LineSearch line_search = LineSearch::full;
  Forcing forcing = Forcing::eisenstat_walker;
  Preconditioner preconditioner = Preconditioner::automatic;
  Aggregation aggregation = Aggregation::automatic;
  double linear_rtol = 1e-8;         ///< KSP rtol with fixed forcing; the tightest forcing term with Eisenstat–Walker
  double eta_max = 1e-3;             ///< Eisenstat–Walker: the first and largest forcing term
  bool reuse_preconditioner = true;  ///< keep the preconditioner across Newton iterations and steps while it pays
  /// Multigrid preconditioners (GAMG, ML): the Krylov method and the finest level's smoothers multiply with a BAIJ
  /// copy of the matrix through our own threaded product (one more matrix in memory; linalg/block_operator.hpp),
  /// and GAMG's coarse levels too (linalg/multigrid_products.hpp).
  bool block_operator = true;
  /// Rebuild when the last solve's extra KSP time over a fresh preconditioner's exceeds this fraction of a set-up.
  double rebuild_ratio = 0.5;
  /// GAMG under CG: rebuild at the start of a step (load or time step) when the last solve's estimate of the
  /// preconditioned operator's largest eigenvalue exceeds this multiple of the one right after the last set-up
  /// (a stale hierarchy's coarse operators no longer match the fine one; solver.md, "Preconditioner reuse").
  /// 0: off.
  double rebuild_eigenvalue = 1.5;
  /// GAMG with our coarse-operator rebuilds: a rebuild first turns each row block of the finest interpolation by its
  /// vertex's rotation from the rest state (mesh/vertex_rotations.hpp), so the coarse levels follow the body's
  /// local rotations (solver.md, "Preconditioner reuse"). Solid (tetrahedral) models only.
  bool corotational = true;
  long long direct_max_dofs = 10000;  ///< `auto`: largest system factorized directly
};

/// `discretization:` (default: nodes). With type frames exactly one of `frames` (a count, placed by `placement`,
/// frames/frame_placement.hpp) or `positions` (each snapped to its nearest vertex); `frame_type`, `weights`,
/// `sample_grid`. The defaults (rigid, harmonic, farthest) are the model as it was first offered, kept so that a job
/// means what it meant; affine, diffused, kmeans is the study's most accurate (docs/guide/frames.md "Frame-based models").
struct DiscretizationSpec {
  DiscretizationType type = DiscretizationType::nodes;
  int frame_count = 0;                           ///< `frames: N` (0 when positions are given)
  std::vector<std::array<double, 3>> positions;  ///< `positions: [[x, y, z], ...]`
  FrameWeights weights = FrameWeights::harmonic;
  FrameType frame_type = FrameType::rigid;                      ///< `frame_type`
  FrameMass frame_mass = FrameMass::weighted;                   ///< `frame_mass`
  FramePlacementRule placement = FramePlacementRule::farthest;  ///< `placement` (with `frames: N` only)
  /// `sample_grid: [nx, ny, nz]`: integrate at one sample per cell of this grid over the mesh's bounding box
  /// instead of one per tet (empty: per tet).
  std::optional<std::array<int, 3>> sample_grid;
  int line = 0;  ///< line of the `discretization` entry (0 if not given)
};

/// `output:` beyond the directory and the frequency: the file format, the fields written and their compression.
enum class OutputFormat { vtu, xdmf };
struct OutputSpec {
  OutputFormat format = OutputFormat::vtu;  ///< vtu: .pvd/.pvtu/.vtu per rank and step; xdmf: one .h5 + .xdmf
  std::vector<std::string> fields;          ///< the fields written (output_field_names()); empty: all of the run's
  bool gzip = false;                        ///< xdmf: HDF5 shuffle + deflate on chunked datasets
  bool single_precision = true;             ///< xdmf: the fields stored as float32 (geometry stays float64)
};
/// The field names `output: {fields}` accepts.
const std::vector<std::string>& output_field_names();

/// `obstacles[].shape`.
enum class ObstacleShape : std::uint8_t { plane, box, sphere, cylinder, mesh };
std::string_view to_string(ObstacleShape shape);

/// `obstacles[].motion`: a rigid translation, offset(t) = schedule(t) * translate. Without a schedule the factor is
/// the load factor (static) or a ramp from 0 at t = 0 to 1 at end_time (dynamic), as for `boundary[].displace`.
struct ObstacleMotion {
  std::array<double, 3> translate{};
  std::optional<Schedule> schedule;
};

/// One `obstacles[]` entry: a rigid obstacle the body must not penetrate (contact/obstacle.hpp). Each shape uses its
/// own keys; the others keep their defaults.
struct ObstacleSpec {
  std::string name;                              ///< unique; "obstacle<i>" when not given
  ObstacleShape shape = ObstacleShape::plane;
  std::array<double, 3> point{}, normal{0, 0, 1};  ///< plane: a point and the unit normal (pointing out of the solid)
  std::array<double, 3> lo{}, hi{};               ///< box: the corners [lo, hi]
  std::array<double, 3> center{};                 ///< sphere, cylinder (the middle of the axis)
  std::array<double, 3> axis{0, 0, 1};            ///< cylinder: unit
  double radius = 0.0;                            ///< sphere, cylinder
  double length = 0.0;                            ///< cylinder: from cap to cap
  std::string file;                               ///< mesh: resolved path of a Gmsh .msh or an STL (ASCII or binary)
  double friction = 0.0;                          ///< Coulomb's coefficient (>= 0)
  std::optional<ObstacleMotion> motion;
  std::string key;                                ///< "obstacles[i]", for messages
  int line = 0;
};

/// `contact:` (with obstacles; docs/design.md "Contact"). 0 means auto for each number.
struct ContactSpec {
  contact::ContactMethod method = contact::ContactMethod::barrier;
  double distance = 0.0;           ///< the barrier's activation distance dh; auto: 1e-3 of the body's box diagonal
  double stiffness = 0.0;          ///< kappa (barrier) or k (penalty); auto: from the body's stiffness and mass
  double friction_velocity = 0.0;  ///< friction's slip velocity eps_v; auto: 1e-3 box diagonals per unit time
  bool self = false;               ///< self-contact: the body's surface against itself (solver/self_contact.hpp)
  double self_friction = 0.0;      ///< `friction`: Coulomb's coefficient between parts of the body
  int line = 0;                    ///< 0: the section was not given
};

struct Job {
  std::string job_file;                  ///< path of the YAML file itself
  std::string job_dir;                   ///< directory the relative paths were resolved against
  std::optional<std::string> mesh_file;  ///< resolved path, or empty when generated
  std::optional<GenerateSpec> generate;
  PartitionMethod partition_method = PartitionMethod::automatic;  ///< `partition: {method}`
  /// `partition: {renumber}`: each rank's vertices in reverse Cuthill-McKee order (partition/locality.hpp), not the
  /// file's.
  bool renumber_vertices = true;
  std::vector<MaterialSpec> materials;
  std::vector<BoundarySpec> boundary;
  LoadSpec loads;
  std::vector<AttachmentSpec> attachments;
  DiscretizationSpec discretization;
  std::vector<ObstacleSpec> obstacles;
  ContactSpec contact;
  AnalysisType analysis_type = AnalysisType::statics;
  int steps = 1;                       ///< static load steps (dynamic: load steps of initial_state static)
  std::optional<DynamicSpec> dynamic;  ///< set when analysis_type is dynamics
  double newton_rtol = 1e-10;
  double newton_atol = 1e-12;
  int newton_max_it = 30;
  std::string petsc_options;     ///< extra PETSc options; the command line wins
  SolverSpec solver;             ///< the rest of `solver:`
  std::string output_directory;  ///< resolved
  int output_every = 1;
  OutputSpec output;  ///< `output: {format, fields, compression}`
  int checkpoint_every = 0;  ///< dynamic: checkpoint every N steps (0 = only at the end)
};

/// Parse and validate a job file. Throws InputError naming file, line and key on any problem:
/// unknown key, wrong type, missing required key, out-of-range value, mesh file that does not exist.
Job read_job(const std::string& path);

/// True when a material of the job has membrane bending (bending_stiffness > 0): the mesh is then distributed with
/// its hinge stencils (distribute_mesh(..., hinges = true)).
[[nodiscard]] bool any_bending(const Job& job);

}  // namespace edgefem
