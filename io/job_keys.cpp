// SPDX-License-Identifier: BSD-3-Clause
/// \file job_keys.cpp
/// The job file's key table (job_keys.hpp) and what is generated from it.
#include "io/job_keys.hpp"

#include <yaml-cpp/yaml.h>

#include <array>
#include <cctype>
#include <stdexcept>

#include "materials/registry.hpp"

namespace edgefem {

namespace {

// Units: edgefem has none of its own; a job uses any consistent set (e.g. SI: m, s, kg, N, Pa). "pressure" is
// force per area, "stiffness" force per length.
constexpr JobKey top_keys[] = {
    {"mesh", "mapping", "required", "", "the mesh: a Gmsh file or a generated box or sheet", "mesh"},
    {"materials", "list of mappings", "required", "", "the materials, one entry per region (or one for all cells)",
     "materials[]"},
    {"boundary", "list of mappings", "", "", "fixed, displaced and rotated vertices; a later entry overrides an "
     "earlier one per component", "boundary[]"},
    {"loads", "mapping", "", "", "gravity and surface tractions", "loads"},
    {"attachments", "list of mappings", "", "", "penalty springs tying vertices to moving anchors", "attachments[]"},
    {"obstacles", "list of mappings", "", "", "rigid obstacles the body must not penetrate (docs/guide/contact.md)",
     "obstacles[]"},
    {"contact", "mapping", "barrier, auto", "", "how contact is treated (with obstacles, or self: true)",
     "contact"},
    {"discretization", "mapping", "nodes", "", "the unknowns: the mesh's vertices, or frames (a reduced model)",
     "discretization"},
    {"analysis", "mapping", "static, 1 step", "", "static load steps or dynamics", "analysis"},
    {"solver", "mapping", "", "", "Newton and the linear solver (docs/theory/solver.md)", "solver"},
    {"output", "mapping", "", "", "where and how often results are written", "output"},
    {"partition", "mapping", "", "", "how the mesh is split over the MPI ranks", "partition"},
};

constexpr JobKey partition_keys[] = {
    {"method", "one of: metis, ptscotch", "metis below 500,000 cells, ptscotch from there on", "",
     "the cell partitioner (METIS on rank 0, or PT-Scotch distributed)"},
    {"renumber", "true | false", "true", "", "each rank's vertices in reverse Cuthill-McKee order (faster kernels)"},
};

constexpr JobKey mesh_keys[] = {
    {"file", "path", "", "", "a Gmsh .msh file, version 2.2 or 4.1, ASCII or binary (relative to the job file); "
     "exactly one of file and generate"},
    {"generate", "mapping", "", "", "a generated mesh instead of a file", "mesh.generate"},
};

constexpr JobKey generate_keys[] = {
    {"shape", "one of: box, sheet", "required", "", "box: tets filling [0, size], region 1 (volume) and 11-16 (faces "
     "x-, x+, y-, y+, z-, z+); sheet: triangles in z = 0, boundary lines 11-14"},
    {"size", "[x, y, z] (sheet: [x, y])", "required", "length", "the extent from the origin"},
    {"cells", "[nx, ny, nz] (sheet: [nx, ny]), integers >= 1", "required", "", "cells along each axis (a box cube is "
     "6 tets, a sheet square 2 triangles)"},
};

constexpr JobKey material_keys[] = {
    {"region", "integer", "every cell", "", "the Gmsh physical tag of the cells this entry applies to"},
    {"model", "see below", "stvk", "", "the material model (tets: stvk, stvk-nsn, stvk-tl, linear, neo-hookean; "
     "triangles: trbs, trqs, springs, linear-membrane, volino)"},
    {"young", "number > 0", "required (isotropic)", "pressure", "Young's modulus"},
    {"poisson", "number; solids -1 < nu < 0.5, membranes -1 < nu < 1", "required (isotropic)", "", "Poisson's ratio"},
    {"anisotropy", "mapping", "", "", "solids: transversely isotropic constants instead of young and poisson",
     "materials[].anisotropy"},
    {"density", "number > 0", "1", "mass per volume (membranes: per area)", "mass density (dynamics, gravity)"},
    {"volumetric_penalty", "true | false", "true", "", "false is volumetric: none (older spelling)"},
    {"volumetric", "one of: cubic, quadratic, none", "cubic", "", "Kikuuwe's volumetric term against inversion (tets)"},
    {"thickness", "number > 0", "1", "length", "membranes: the sheet's thickness"},
    {"warp", "mapping", "", "", "volino: the warp direction of the fabric", "materials[].warp"},
    {"orthotropic", "mapping", "", "", "volino: linear weft, warp and shear moduli", "materials[].orthotropic"},
    {"curves", "mapping", "", "", "volino: measured strain-stress curves per mode", "materials[].curves"},
    {"stabilization", "one of: none, clamp, eigen-clamp", "none", "", "volino: treatment of the geometric stiffness "
     "term"},
    {"spring_damping", "number >= 0", "0", "force time per length", "trbs, trqs, springs: damping along the springs"},
    {"viscosity", "[weft, warp, shear], numbers >= 0", "[0, 0, 0]", "pressure time", "volino: strain-rate damping"},
    {"bending", "mapping", "", "", "membranes: isometric (Bergou) bending", "materials[].bending"},
    {"plasticity", "mapping", "", "", "isotropic stvk / stvk-tl tets with integrator position-based and inversion "
     "none: Bender's plastic strain", "materials[].plasticity"},
};

constexpr JobKey bending_keys[] = {
    {"stiffness", "number >= 0", "required", "energy", "the bending stiffness kb"},
};

constexpr JobKey anisotropy_keys[] = {
    {"type", "transversely-isotropic", "required", "", "the kind of anisotropy"},
    {"fibre", "[x, y, z], non-zero", "required", "", "the fibre direction"},
    {"young_fibre", "number > 0", "required", "pressure", "E_f, Young's modulus along the fibre"},
    {"young_transverse", "number > 0", "required", "pressure", "E_t, Young's modulus across the fibre"},
    {"shear_fibre", "number > 0", "required", "pressure", "G_ft, shear modulus in planes containing the fibre"},
    {"poisson_fibre", "number", "required", "", "nu_ft, transverse contraction per fibre extension"},
    {"poisson_transverse", "number", "required", "", "nu_tt, Poisson's ratio within the transverse plane"},
};

constexpr JobKey plasticity_keys[] = {
    {"yield", "number >= 0", "required", "", "gamma_yield, the strain norm where plastic flow starts"},
    {"creep", "number in [0, 1/dt]", "required", "1/time", "gamma_creep, the rate of plastic flow"},
    {"max", "number >= 0", "required", "", "gamma_max, the largest plastic strain norm"},
};

constexpr JobKey warp_keys[] = {
    {"direction", "[x, y, z], non-zero", "[0, 1, 0]", "", "the warp direction, projected onto each triangle"},
    {"angle", "number", "0", "degrees", "then turned about the normal (counter-clockwise about +z)"},
};

constexpr JobKey orthotropic_keys[] = {
    {"weft", "number > 0", "required", "pressure", "the weft modulus"},
    {"warp", "number > 0", "required", "pressure", "the warp modulus"},
    {"shear", "number > 0", "required", "pressure", "the shear modulus"},
    {"poisson", "number", "0", "", "the weft-warp Poisson ratio"},
};

constexpr JobKey curves_keys[] = {
    {"weft", "CSV file or [[strain, stress], ...]", "required", "stress: pressure", "the weft strain-stress curve"},
    {"warp", "CSV file or [[strain, stress], ...]", "required", "stress: pressure", "the warp strain-stress curve"},
    {"shear", "CSV file or [[strain, stress], ...]", "required", "stress: pressure", "the shear strain-stress curve"},
};

constexpr JobKey select_keys[] = {
    {"region", "integer", "", "", "the vertices of cells and file facets with this physical tag (tractions: the "
     "boundary facets with it)"},
    {"box", "[[x0, y0, z0], [x1, y1, z1]]", "", "length", "the vertices in the closed box (tractions: the boundary "
     "facets with all vertices in it)"},
    {"all", "true", "", "", "every vertex (tractions: every boundary facet)"},
    {"point", "[x, y, z]", "", "length", "the vertex nearest to the point (over all ranks; the distance is printed; "
     "not for tractions)"},
    {"points", "[[x, y, z], ...]", "", "length", "the vertex nearest to each point (not for tractions)"},
};

constexpr JobKey boundary_keys[] = {
    {"select", "mapping: exactly one of region, box, all, point, points", "required", "", "which vertices", "select"},
    {"fix", "list of x, y, z", "", "", "the components held at their reference position"},
    {"displace", "[dx, dy, dz] (~ = free)", "", "length", "prescribed displacements, at load factor 1"},
    {"rotate", "mapping", "", "", "a prescribed rotation about an axis", "boundary[].rotate"},
    {"schedule", "mapping", "linear in the load factor / time", "", "how displace and rotate grow", "schedule"},
};

constexpr JobKey rotate_keys[] = {
    {"axis", "[x, y, z], non-zero", "required", "", "the rotation axis"},
    {"center", "[x, y, z]", "required", "length", "a point on the axis"},
    {"angle", "number", "required", "degrees", "the angle at load factor 1"},
    {"components", "list of x, y, z", "[x, y, z]", "", "the components the rotation prescribes"},
};

constexpr JobKey loads_keys[] = {
    {"gravity", "[gx, gy, gz]", "[0, 0, 0]", "length/time^2", "a body acceleration (times the density)"},
    {"tractions", "list of mappings", "", "", "surface (membranes: edge) loads", "loads.tractions[]"},
};

constexpr JobKey traction_keys[] = {
    {"select", "mapping: exactly one of region, box, all, point, points", "required", "", "which boundary facets", "select"},
    {"traction", "[tx, ty, tz]", "required", "pressure (membranes: force per length)", "nominal traction, per "
     "reference area (or length)"},
    {"schedule", "mapping", "linear in the load factor / time", "", "how it grows", "schedule"},
};

constexpr JobKey schedule_keys[] = {
    {"ramp", "[t0, t1]", "", "time (static: load factor)", "0 before t0, linear to 1 at t1, then 1; exactly one of ramp "
     "and table"},
    {"table", "[[t, s], ...]", "", "time (static: load factor)", "piecewise linear scale s(t)"},
};

constexpr JobKey attachment_keys[] = {
    {"select", "mapping: exactly one of region, box, all, point, points", "required", "", "the attached vertices", "select"},
    {"stiffness", "number > 0", "required", "stiffness", "the spring per vertex"},
    {"damping", "number >= 0", "0", "force time per length", "the damper per vertex (not with position-based)"},
    {"path", "[[t, dx, dy, dz], ...]", "", "time, length", "the anchor's displacement, piecewise linear in time"},
    {"velocity", "[vx, vy, vz]", "", "length/time", "the anchor moves at this velocity (not with path; neither: fixed "
     "anchor)"},
};

constexpr JobKey obstacle_keys[] = {
    {"name", "letters, digits, '_', '-'; unique", "obstacle<i>", "", "names the obstacle in reactions.csv and "
     "summary.json"},
    {"shape", "one of: plane, box, sphere, cylinder, mesh", "required", "", "the obstacle's shape; each shape takes "
     "its own keys below and refuses the others'"},
    {"friction", "number >= 0", "0", "", "Coulomb's coefficient (0: frictionless)"},
    {"motion", "mapping", "", "", "a rigid translation on a schedule (absent: the obstacle stays; not with "
     "discretization frames)",
     "obstacles[].motion"},
    {"point", "[x, y, z]", "required (plane)", "length", "plane: a point of the plane"},
    {"normal", "[x, y, z] of length 1 (to 1e-6)", "required (plane)", "", "plane: the normal, out of the obstacle "
     "(the body is on its side)"},
    {"box", "[[x0, y0, z0], [x1, y1, z1]], x0 < x1, y0 < y1, z0 < z1", "required (box)", "length", "box: two corners"},
    {"center", "[x, y, z]", "required (sphere, cylinder)", "length", "sphere: the centre; cylinder: the middle of its "
     "axis"},
    {"radius", "number > 0", "required (sphere, cylinder)", "length", "sphere, cylinder: the radius"},
    {"axis", "[x, y, z] of length 1 (to 1e-6)", "required (cylinder)", "", "cylinder: the axis direction"},
    {"length", "number > 0", "required (cylinder)", "length", "cylinder: from cap to cap"},
    {"file", "path", "required (mesh)", "", "mesh: a triangle surface, Gmsh .msh or STL (ASCII or binary), relative "
     "to the job file"},
};

constexpr JobKey obstacle_motion_keys[] = {
    {"translate", "[dx, dy, dz]", "required", "length", "the translation at schedule value 1"},
    {"schedule", "mapping", "static: the load factor; dynamic: 0 at t = 0 to 1 at end_time", "",
     "how the translation grows", "schedule"},
};

constexpr JobKey contact_keys[] = {
    {"method", "one of: barrier, penalty", "barrier", "", "barrier: IPC's log barrier, no iterate ever penetrates; "
     "penalty: quadratic, may penetrate (the deepest penetration is reported); position-based: not used (contact "
     "constraints in the sweep)"},
    {"distance", "number > 0 or auto", "auto", "length", "the barrier's activation distance d-hat (auto: 1e-3 of the "
     "body's bounding-box diagonal); position-based self-collision: the thickness kept between parts"},
    {"stiffness", "number > 0 or auto", "auto", "stiffness", "the barrier (kappa) or "
     "penalty stiffness (auto: from the material, the mesh and the mass; adaptive for the barrier)"},
    {"friction_velocity", "number > 0 or auto", "auto", "length/time", "smoothed friction's slip velocity eps_v "
     "(auto: 1e-3 box diagonals per unit time)"},
    {"self", "true or false", "false", "", "self-contact: the body's boundary faces (tets) or triangles (membranes) "
     "against each other, parts of one mesh included, with the same barrier and never an intersection (Newton "
     "solvers; position-based: constraints at the thickness distance and a fail-safe; docs/theory/self_contact.md)"},
    {"friction", "number >= 0", "0", "", "Coulomb's coefficient between parts of the body (with self: true; "
     "lagged, smoothed by friction_velocity; obstacles keep their own friction)"},
};

constexpr JobKey analysis_keys[] = {
    {"type", "one of: static, dynamic", "static", "", "load steps (Newton) or time steps"},
    {"steps", "integer >= 1", "1", "", "static load steps (also of initial_state: static)"},
    {"dynamic", "mapping", "", "", "older form: the dynamic keys below nested under analysis.dynamic",
     "analysis.dynamic"},
    {"dt", "number > 0", "required (dynamic)", "time", "the time step"},
    {"end_time", "number > 0, a whole number of dt", "required (dynamic)", "time", "the simulated time"},
    {"integrator", "one of: backward-euler, linearized-euler, newmark, position-based", "backward-euler", "",
     "the time integrator"},
    {"damping", "mapping", "no damping", "", "Rayleigh damping B = alpha M + beta K", "analysis.damping"},
    {"mass", "one of: lumped, consistent", "lumped", "", "the mass matrix"},
    {"max_step_cuts", "integer >= 0", "6", "", "halvings of dt allowed within one step before giving up"},
    {"initial_velocity", "[vx, vy, vz]", "[0, 0, 0]", "length/time", "every vertex's velocity at t = 0"},
    {"initial_state", "rest | static | {flatten: x|y|z} | {mirror: x|y|z}", "rest", "", "the start: at rest, the "
     "static equilibrium under the loads at t = 0, or (position-based) a flattened or mirrored mesh",
     "analysis.initial_state"},
    {"position_based", "mapping", "", "", "integrator position-based: its sweeps", "analysis.position_based"},
};

constexpr JobKey dynamic_keys[] = {
    {"dt", "as analysis.dt", "required", "time", "the time step"},
    {"end_time", "as analysis.end_time", "required", "time", "the simulated time"},
    {"integrator", "as analysis.integrator", "backward-euler", "", "the time integrator"},
    {"damping", "mapping", "no damping", "", "Rayleigh damping", "analysis.damping"},
    {"mass", "as analysis.mass", "lumped", "", "the mass matrix"},
    {"max_step_cuts", "as analysis.max_step_cuts", "6", "", "halvings of dt within one step"},
    {"initial_velocity", "as analysis.initial_velocity", "[0, 0, 0]", "length/time", "the initial velocity"},
    {"initial_state", "as analysis.initial_state", "rest", "", "the start", "analysis.initial_state"},
    {"position_based", "mapping", "", "", "as analysis.position_based", "analysis.position_based"},
};

constexpr JobKey damping_keys[] = {
    {"mass", "number >= 0", "0", "1/time", "alpha, the mass-proportional coefficient"},
    {"stiffness", "number >= 0", "0", "time", "beta, the stiffness-proportional coefficient"},
};

constexpr JobKey initial_shape_keys[] = {
    {"flatten", "one of: x, y, z", "", "", "start from the mesh flattened onto the plane normal to this axis"},
    {"mirror", "one of: x, y, z", "", "", "start from the mesh mirrored along this axis (inverted elements)"},
};

constexpr JobKey position_based_keys[] = {
    {"iterations", "integer in [1, 10000]", "5", "", "constraint sweeps per time step"},
    {"sweep", "one of: colored, jacobi", "colored", "", "Gauss-Seidel by cell colours (rank-count independent) or "
     "averaged Jacobi"},
    {"xpbd", "true | false", "true", "", "compliance 1/(k dt^2) from the material (XPBD); false: Bender's stiff "
     "projection"},
    {"velocity_damping", "number in [0, 1)", "0", "", "v <- (1 - velocity_damping) v after each step"},
    {"inversion", "one of: svd, none", "svd", "", "inverted elements: Irving's SVD diagonalization, or none"},
    {"acceleration", "one of: none, chebyshev", "none", "", "Chebyshev semi-iteration over the sweeps (needs sweep "
     "colored, xpbd true and spectral_radius)"},
    {"spectral_radius", "number in (0, 1)", "required with chebyshev", "", "the sweep's estimated spectral radius"},
};

constexpr JobKey solver_keys[] = {
    {"newton", "mapping", "", "", "Newton's method (static steps, implicit time steps)", "solver.newton"},
    {"linear", "mapping", "", "", "the Krylov solver and preconditioner", "solver.linear"},
    {"petsc", "string", "", "", "PETSc options (e.g. \"-ksp_monitor\"); the command line's win"},
};

constexpr JobKey newton_keys[] = {
    {"rtol", "number >= 0", "1e-10", "", "stop when |R| <= rtol |R_0| (or atol)"},
    {"atol", "number >= 0", "1e-12", "force", "stop when |R| <= atol"},
    {"max_it", "integer >= 1", "30", "", "Newton iterations per step before the step is cut"},
    {"predictor", "one of: extrapolate, none", "extrapolate", "", "the first iterate of a load step"},
    {"line_search", "one of: full, cp, bt, basic", "full", "", "the line search (full: ours, on the energy)"},
    {"forcing", "one of: eisenstat-walker, fixed", "eisenstat-walker", "", "the linear tolerance per iteration"},
    {"eta_max", "number in (0, 1)", "1e-3", "", "Eisenstat-Walker: the first and largest forcing term"},
};

constexpr JobKey linear_keys[] = {
    {"preconditioner", "one of: auto, gamg, hypre, direct, block-jacobi, schwarz", "auto", "", "auto: direct up to "
     "direct_max_dofs, GAMG above, additive Schwarz for dynamic membranes"},
    {"aggregation", "one of: auto, smoothed, unsmoothed", "auto", "", "GAMG's prolongation (auto: smoothed unless the "
     "memory estimate says it does not fit)"},
    {"rtol", "number > 0", "1e-8", "", "the KSP tolerance with fixed forcing, the tightest with Eisenstat-Walker"},
    {"reuse", "true | false", "true", "", "keep the preconditioner across iterations and steps while it pays"},
    {"rebuild_ratio", "number >= 0", "0.5", "", "rebuild when the extra KSP time exceeds this fraction of a set-up"},
    {"rebuild_eigenvalue", "number >= 0", "1.5", "", "GAMG under CG: rebuild when the largest eigenvalue estimate grew "
     "by this factor (0: off)"},
    {"corotational", "true | false", "true", "", "GAMG rebuilds rotate the interpolation with the body (solids)"},
    {"direct_max_dofs", "integer >= 0", "10000", "", "auto: the largest system factorized directly"},
    {"block_operator", "true | false", "true", "", "multigrid products on our threaded 3x3-block copy of the matrix"},
};

constexpr JobKey discretization_keys[] = {
    {"type", "one of: nodes, frames", "nodes", "", "the mesh's vertices, or Gilles' frame-based reduced model"},
    {"frames", "integer >= 1", "", "", "frames: how many frames to place (exactly one of frames and positions)"},
    {"positions", "[[x, y, z], ...]", "", "length", "frames: where the frames are"},
    {"weights", "one of: harmonic, hat, diffused", "harmonic", "", "frames: the blending weights"},
    {"sample_grid", "[nx, ny, nz], integers in [1, 100000]", "one sample per tet", "", "frames: a voxel grid of integration "
     "samples"},
    {"frame_type", "one of: rigid, affine", "rigid", "", "frames: rigid (6 dofs, dual quaternions) or affine (12)"},
    {"placement", "one of: farthest, kmeans", "farthest", "", "frames: with frames: N, how they are placed"},
    {"frame_mass", "one of: blocks, weighted", "weighted", "",
     "frames, dynamics: weighted (row-sum lumping: the translational masses sum to the body's, a free body falls at "
     "g) or blocks (the paper's Eq. 6 without cross terms: weights squared, lighter than the body where weights "
     "overlap)"},
};

constexpr JobKey output_keys[] = {
    {"directory", "path", "out/<job file stem>", "", "where solution.pvd, summary.json and checkpoints go (relative "
     "to the job file; --output overrides)"},
    {"every", "integer >= 1", "1", "", "write every N-th step (and always the last)"},
    {"format", "one of: vtu, xdmf", "vtu", "", "vtu: solution.pvd, a .pvtu and one .vtu per rank per step; xdmf: "
     "solution.xdmf and one solution.h5 for the run (parallel HDF5, the mesh once; docs/guide/paraview.md)"},
    {"fields", "list of: displacement, velocity, force, green_strain, stress, von_mises, volume_ratio, rank, region, "
     "plastic_strain, contact_gap, contact_force", "all the run has", "", "the fields written (those the analysis does not have are skipped)"},
    {"compression", "one of: none, gzip", "none", "", "xdmf: HDF5 shuffle + deflate (level 1) on chunked datasets"},
    {"precision", "one of: single, double", "single (xdmf)", "", "xdmf: the fields' floating-point type in the .h5: "
     "single = float32 (about 7 significant digits; the geometry stays float64; restarts read checkpoints, never "
     "the output); vtu is always double"},
    {"checkpoint_every", "integer >= 0", "0", "", "dynamic: a checkpoint every N steps (0: at the end only)"},
};

constexpr JobSection sections[] = {
    {"", "The top level of a job file.", top_keys},
    {"mesh", "The mesh.", mesh_keys},
    {"mesh.generate", "A generated mesh.", generate_keys},
    {"materials[]", "One material entry.", material_keys},
    {"materials[].anisotropy", "Transversely isotropic solids.", anisotropy_keys},
    {"materials[].bending", "Membrane bending.", bending_keys},
    {"materials[].plasticity", "Position-based plasticity (Bender et al.).", plasticity_keys},
    {"materials[].warp", "Volino's membrane: the warp direction.", warp_keys},
    {"materials[].orthotropic", "Volino's membrane: linear moduli.", orthotropic_keys},
    {"materials[].curves", "Volino's membrane: strain-stress curves.", curves_keys},
    {"boundary[]", "One boundary condition.", boundary_keys},
    {"boundary[].rotate", "A prescribed rotation.", rotate_keys},
    {"select", "A selection of vertices or boundary facets (boundary, tractions, attachments).", select_keys},
    {"schedule", "A time (static: load factor) schedule of a displacement, rotation or traction.", schedule_keys},
    {"loads", "External loads.", loads_keys},
    {"loads.tractions[]", "One surface traction.", traction_keys},
    {"attachments[]", "One penalty attachment.", attachment_keys},
    {"obstacles[]", "One rigid obstacle (docs/guide/contact.md).", obstacle_keys},
    {"obstacles[].motion", "An obstacle's rigid motion.", obstacle_motion_keys},
    {"contact", "Contact with the obstacles and self-contact.", contact_keys},
    {"analysis", "The analysis. The dynamic keys are refused when type is static.", analysis_keys},
    {"analysis.dynamic", "The older nested form of the dynamic keys.", dynamic_keys},
    {"analysis.damping", "Rayleigh damping.", damping_keys},
    {"analysis.initial_state", "The mapping form of initial_state (integrator position-based).", initial_shape_keys},
    {"analysis.position_based", "The position-based integrator.", position_based_keys},
    {"solver", "The nonlinear and linear solvers.", solver_keys},
    {"solver.newton", "Newton's method.", newton_keys},
    {"solver.linear", "The linear solver.", linear_keys},
    {"discretization", "The unknowns.", discretization_keys},
    {"output", "The output.", output_keys},
    {"partition", "The partition.", partition_keys},
};

/// The anchor of a section's heading (GitHub's rule: lower case, punctuation dropped, spaces to hyphens).
std::string anchor(std::string_view section) {
  std::string out;
  for (const char c : section.empty() ? std::string_view("top level") : section) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-') out += static_cast<char>(std::tolower(c));
    if (c == ' ') out += '-';
  }
  return out;
}

std::string cell(std::string_view text) {
  std::string out;
  for (const char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out.empty() ? "" : out;
}

}  // namespace

std::span<const JobSection> job_sections() { return sections; }

const JobSection& job_section(std::string_view name) {
  for (const JobSection& s : sections)
    if (s.name == name) return s;
  throw std::logic_error("job key table: no section '" + std::string(name) + "'");
}

std::string job_reference_markdown() {
  std::string md =
      "# Job-file reference\n\n"
      "<!-- Generated by `edgefem job --reference` from the parser's key table (io/job_keys.cpp). Do not edit:\n"
      "     regenerate with `build/edgefem job --reference > docs/reference/job-file.md` (test docs.job_reference). -->\n\n"
      "Every key the job parser accepts, by section; a key not listed here is refused with the list of the valid ones.\n"
      "Defaults: \"required\" must be given; an empty default means absent is off or not used. edgefem has no units of\n"
      "its own: use one consistent set (e.g. SI). Examples: [the tutorials](../tutorials/README.md); the guide:\n"
      "[job files](../guide/job-files.md).\n\n"
      "`materials[].model`: one of " + model_names_where([](const ModelInfo&) { return true; }, ", ") + ".\n";
  for (const JobSection& s : sections) {
    md += "\n## " + (s.name.empty() ? std::string("Top level") : "`" + std::string(s.name) + "`") + "\n\n" +
          std::string(s.meaning) + "\n\n";
    md += "| key | type | default | unit | meaning |\n|---|---|---|---|---|\n";
    for (const JobKey& k : s.keys) {
      std::string meaning = cell(k.meaning);
      if (!k.child.empty()) meaning += " (see [`" + std::string(k.child) + "`](#" + anchor(k.child) + "))";
      md += "| `" + std::string(k.name) + "` | " + cell(k.type) + " | " + cell(k.default_value) + " | " + cell(k.unit) +
            " | " + meaning + " |\n";
    }
  }
  return md;
}

namespace {

void emit(YAML::Emitter& out, const YAML::Node& node, std::string_view section);

/// A value: a mapping of a known section is resolved, a list of such mappings item by item, anything else as given.
void emit_value(YAML::Emitter& out, const YAML::Node& value, std::string_view child) {
  if (!child.empty() && value.IsMap()) {
    emit(out, value, child);
  } else if (!child.empty() && value.IsSequence() && child.ends_with("[]")) {
    out << YAML::Block << YAML::BeginSeq;
    for (const YAML::Node& item : value) emit_value(out, item, item.IsMap() ? child : std::string_view{});
    out << YAML::EndSeq;
  } else {
    out << value;
  }
}

/// A default that is a value one could write (a word, a number or a list), not a description.
bool writable_default(const JobKey& k) {
  const std::string_view d = k.default_value;
  return k.child.empty() && !d.empty() && (d.front() == '[' || d.find(' ') == std::string_view::npos);
}

/// Whether an absent key's default means anything for this material entry's model (the membrane keys not for a
/// tet model, Volino's and the springs' only for theirs).
bool applies_to_material(const YAML::Node& material, std::string_view key) {
  const YAML::Node model = material["model"];
  const ModelInfo* info = find_model(model && model.IsScalar() ? model.Scalar() : "stvk");
  if (info == nullptr) return true;
  const bool tets = info->cell == CellKind::tetrahedron;
  if (key == "thickness") return !tets;
  if (key == "volumetric" || key == "volumetric_penalty") return tets;
  if (key == "spring_damping") return info->keys.spring_damping;
  if (key == "stabilization" || key == "viscosity") return info->keys.volino;
  return true;
}

/// A default as YAML: a list in flow style, anything else as its text.
void emit_default(YAML::Emitter& out, std::string_view value) {
  if (value.front() == '[') {
    out << YAML::Flow << YAML::Load(std::string(value));
  } else {
    out << std::string(value);
  }
  out << YAML::Comment("default");
}

void emit(YAML::Emitter& out, const YAML::Node& node, std::string_view section) {
  // A static analysis has no use for the dynamic keys' defaults.
  const bool static_analysis =
      section == "analysis" && !(node["type"] && node["type"].IsScalar() && node["type"].Scalar() == "dynamic");
  out << YAML::Block << YAML::BeginMap;
  for (const JobKey& k : job_section(section).keys) {
    const std::string name(k.name);
    if (const YAML::Node value = node[name]; value) {
      out << YAML::Key << name << YAML::Value;
      emit_value(out, value, k.child);
    } else if (writable_default(k) && !(static_analysis && name != "type" && name != "steps") &&
               (section != "materials[]" || applies_to_material(node, name))) {
      out << YAML::Key << name << YAML::Value;
      emit_default(out, k.default_value);
    }
  }
  out << YAML::EndMap;
}

}  // namespace

std::string resolved_job_yaml(const YAML::Node& root) {
  YAML::Emitter out;
  emit(out, root, "");
  return std::string(out.c_str()) + "\n";
}

}  // namespace edgefem
