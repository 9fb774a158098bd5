#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Bad values for the keys of the newer solvers (issue 55): `discretization` (frames), `analysis.position_based`,
`plasticity`, `bending` and `analysis.initial_state`. Each row of CASES is a tiny job with one bad value; `edgefem
run` on it must end with exit status 1 (an error reported on every rank: no signal, no MPI_Abort, no PETSc error
handler) within the timeout, and print the expected message (a regular expression: file:line, the key, the value,
what was expected).

  check_bad_input.py --mpiexec MPIEXEC --np N --edgefem EDGEFEM --out DIR [--jobs K] [--only NAME] [--list]

Obstacles and contact (issue 48): a row may carry a fourth element, {file name: bytes}, written next to the job
(the obstacle files).
"""
import argparse
import concurrent.futures
import os
import re
import struct
import subprocess
import sys
import time

# ---- the base jobs: small enough that every row runs in well under a second of compute ----------------------------

BOX = "mesh:\n  generate: {shape: box, size: [1, 1, 1], cells: [2, 2, 2]}\n"
SHEET = "mesh:\n  generate: {shape: sheet, size: [1, 1], cells: [4, 4]}\n"
STVK = "materials:\n  - model: stvk\n    young: 1000\n    poisson: 0.3\n"
CLAMP = ("boundary:\n  - select: {box: [[-0.01, -1, -1], [0.01, 2, 2]]}\n    fix: [x, y, z]\n"
         "loads:\n  gravity: [0, 0, -1]\n")
PBD = ("analysis:\n  type: dynamic\n  dt: 0.01\n  end_time: 0.02\n  integrator: position-based\n")


FRAMES_FLOOR = "obstacles:\n  - {{name: floor, shape: plane, point: [0, 0, -0.5], normal: [0, 0, 1]{}}}\n"


def frames(discretization, analysis=""):
    """A static (or `analysis`) frame job on the clamped cube."""
    return BOX + STVK + CLAMP + "discretization: " + discretization + "\n" + analysis


def pbd(position_based=None, material_extra="", initial_state=None, mesh=BOX, material=None):
    """A position-based dynamic job on the clamped cube (or the sheet)."""
    text = mesh + (material if material is not None else STVK + material_extra) + CLAMP + PBD
    if initial_state is not None:
        text += "  initial_state: " + initial_state + "\n"
    if position_based is not None:
        text += "  position_based: " + position_based + "\n"
    return text


def plastic(law, inversion="none", analysis=None):
    material = STVK + "    plasticity: " + law + "\n"
    if analysis is not None:
        return BOX + material + CLAMP + analysis
    return pbd(position_based="{inversion: " + inversion + "}", material=material)


MEMBRANE = "materials:\n  - model: trbs\n    young: 1000\n    poisson: 0.3\n    thickness: 0.01\n"
SHEET_CLAMP = ("boundary:\n  - select: {box: [[-0.01, -1, -1], [0.01, 2, 2]]}\n    fix: [x, y, z]\n"
               "loads:\n  gravity: [0, 0, -1]\n")


def bending(value, model="trbs", mesh=SHEET,
            analysis="analysis: {type: dynamic, dt: 0.01, end_time: 0.02, integrator: backward-euler}\n"):
    young = "" if model == "volino" else "    young: 1000\n    poisson: 0.3\n"
    return (mesh + "materials:\n  - model: " + model + "\n" + young + "    thickness: 0.01\n    bending: " + value +
            "\n" + SHEET_CLAMP + analysis)


def newton_dynamic(initial_state, integrator="backward-euler"):
    return (BOX + STVK + CLAMP + "analysis:\n  type: dynamic\n  dt: 0.01\n  end_time: 0.02\n  integrator: " +
            integrator + "\n  initial_state: " + initial_state + "\n")


def obstacle_job(obstacle, contact="", analysis="analysis: {type: dynamic, dt: 0.01, end_time: 0.02}\n"):
    """The clamped cube above a floor, with one more obstacle (a YAML mapping) and `contact` keys."""
    text = (BOX + STVK + CLAMP + "obstacles:\n  - {name: floor, shape: plane, point: [0, 0, -0.5], "
            "normal: [0, 0, 1]}\n  - " + obstacle + "\n")
    if contact:
        text += "contact: " + contact + "\n"
    return text + analysis


def binary_stl(triangles):
    """A binary STL of `triangles` (each 3 points)."""
    data = b"edgefem check_bad_input".ljust(80, b" ") + struct.pack("<I", len(triangles))
    for t in triangles:
        data += struct.pack("<3f", 0, 0, 0) + b"".join(struct.pack("<3f", *p) for p in t) + b"\0\0"
    return data


FAR = "[[3, 0, 0], [4, 0, 0], [3, 1, 0]]"  # a triangle away from the cube (x > 1)


L = r"job\.yaml:\d+: "  # every message starts with the file and the line

# (name, job text, expected message: a regular expression)
CASES = [
    # ---- discretization (frames) ----------------------------------------------------------------------------------
    ("frames.far_position_harmonic", frames("{type: frames, positions: [[5, 5, 5], [0.9, 0.5, 0.5]], weights: harmonic}"),
     L + r"discretization\.positions\[0\] = \[5, 5, 5\] is 6\.928\d* from the nearest mesh vertex \(file index \d+ at "
         r"1, 1, 1\): expected a point of the body, within 0\.866\d* of a vertex"),
    ("frames.far_position_hat", frames("{type: frames, positions: [[5, 5, 5], [0.9, 0.5, 0.5]], weights: hat}"),
     L + r"discretization\.positions\[0\] = \[5, 5, 5\] is 6\.928"),
    ("frames.far_second_position", frames("{type: frames, positions: [[0.5, 0.5, 0.5], [0.5, -3, 0.5]]}"),
     L + r"discretization\.positions\[1\] = \[0\.5, -3, 0\.5\] is 3 from the nearest mesh vertex"),
    ("frames.huge_position", frames("{type: frames, positions: [[1e200, 0, 0], [0.9, 0.5, 0.5]]}"),
     L + r"discretization\.positions\[0\] = \[1e\+200, 0, 0\] is too far from the mesh to measure"),
    ("frames.all_held_hat", frames("{type: frames, positions: [[1, 1, 1], [0.9, 0.5, 0.5]], weights: hat}"),
     L + r"discretization: every frame is held \(2 of 2: .*\), so the model has no unknown and nothing can move; "
         r"frames at \[1, 1, 1\], \[1, 0\.5, 0\.5\]\. Expected at least one free frame"),
    ("frames.all_held_one_position", frames("{type: frames, positions: [[0.9, 0.5, 0.5]]}"),
     L + r"discretization: every frame is held \(1 of 1"),
    ("frames.all_held_one_frame", frames("{type: frames, frames: 1}"),
     L + r"discretization: every frame is held \(1 of 1"),
    ("frames.all_held_dynamic",
     frames("{type: frames, frames: 1}", "analysis: {type: dynamic, dt: 0.01, end_time: 0.02, "
            "integrator: linearized-euler}\n"),
     L + r"discretization: every frame is held \(1 of 1"),
    ("frames.static_none_held", BOX + STVK + "loads:\n  gravity: [0, 0, -1]\ndiscretization: {type: frames, frames: 3}\n",
     # (the free-body check of issue 50 refuses it before the frames' own check, which stays as a backstop)
     r"job\.yaml: a static analysis needs every part of the mesh held against rigid motion"),
    ("pbd.iterations_over", pbd("{iterations: 10001}"),
     L + r"analysis\.position_based\.iterations: expected an integer in \[1, 10000\], got '10001'"),
    ("frames.same_vertex", frames("{type: frames, positions: [[1, 1, 1], [0.99, 1, 1]]}"),
     L + r"discretization\.positions\[1\] and positions\[0\] snap to the same mesh vertex"),
    ("frames.count_zero", frames("{type: frames, frames: 0}"),
     L + r"discretization\.frames: expected a frame count \(an integer >= 1\), got '0'"),
    ("frames.count_negative", frames("{type: frames, frames: -3}"),
     L + r"discretization\.frames: expected a frame count \(an integer >= 1\), got '-3'"),
    ("frames.count_fraction", frames("{type: frames, frames: 2.5}"),
     L + r"discretization\.frames: expected a frame count \(an integer >= 1\), got '2\.5'"),
    ("frames.count_nan", frames("{type: frames, frames: .nan}"),
     L + r"discretization\.frames: expected a frame count \(an integer >= 1\), got '\.nan'"),
    ("frames.count_int_overflow", frames("{type: frames, frames: 99999999999}"),
     L + r"discretization\.frames: expected a frame count \(an integer >= 1\), got '99999999999'"),
    ("frames.count_over_vertices", frames("{type: frames, frames: 28}"),
     L + r"discretization\.frames: expected at most 27 \(the mesh's vertex count: a frame sits at a vertex\), got 28"),
    ("frames.count_huge", frames("{type: frames, frames: 2000000000}"),
     L + r"discretization\.frames: expected at most 27 \(the mesh's vertex count: a frame sits at a vertex\), got 2000000000"),
    ("frames.count_list", frames("{type: frames, frames: [1, 2]}"),
     L + r"discretization\.frames: expected a frame count \(an integer >= 1\), got a list of 2 entries"),
    ("frames.neither", frames("{type: frames}"),
     L + r"discretization: expected exactly one of 'frames' \(a count\) or 'positions' \(a list of points\), got "
         r"neither"),
    ("frames.both", frames("{type: frames, frames: 3, positions: [[0.5, 0.5, 0.5]]}"),
     L + r"discretization: expected exactly one of 'frames' .* got both"),
    ("frames.positions_empty", frames("{type: frames, positions: []}"),
     L + r"discretization\.positions: expected a non-empty list of frame positions \[\[x, y, z\], \.\.\.\], got a "
         r"list of 0 entries"),
    ("frames.positions_scalar", frames("{type: frames, positions: 5}"),
     L + r"discretization\.positions: expected a non-empty list of frame positions .*got '5'"),
    ("frames.position_two_numbers", frames("{type: frames, positions: [[0.5, 0.5]]}"),
     L + r"discretization\.positions\[0\]: expected a list of 3 numbers \[x, y, z\], got a list of 2 entries"),
    ("frames.position_nan", frames("{type: frames, positions: [[.nan, 0.5, 0.5]]}"),
     L + r"discretization\.positions\[0\]\[0\]: expected a number, got '\.nan'"),
    ("frames.position_inf", frames("{type: frames, positions: [[0.5, -.inf, 0.5]]}"),
     L + r"discretization\.positions\[0\]\[1\]: expected a number, got '-\.inf'"),
    ("frames.position_overflow", frames("{type: frames, positions: [[0.5, 0.5, 1e999]]}"),
     L + r"discretization\.positions\[0\]\[2\]: expected a number, got '1e999'"),
    ("frames.type_unknown", frames("{type: frame, frames: 3}"),
     L + r"discretization\.type: expected one of: nodes, frames, got 'frame' \(did you mean 'frames'\?\)"),
    ("frames.weights_unknown", frames("{type: frames, frames: 3, weights: harmonics}"),
     L + r"discretization\.weights: expected one of: harmonic, hat, diffused, got 'harmonics'"),
    ("frames.frame_type_unknown", frames("{type: frames, frames: 3, frame_type: linear}"),
     L + r"discretization\.frame_type: expected one of: rigid, affine, got 'linear'"),
    ("frames.placement_unknown", frames("{type: frames, frames: 3, placement: random}"),
     L + r"discretization\.placement: expected one of: farthest, kmeans, got 'random'"),
    ("frames.placement_with_positions", frames("{type: frames, positions: [[0.5, 0.5, 0.5]], placement: kmeans}"),
     L + r"discretization\.placement: only with 'frames' \(a count\)"),
    ("frames.key_for_nodes", frames("{type: nodes, weights: hat}"),
     L + r"discretization\.weights: only for type frames \(type is nodes\)"),
    ("frames.unknown_key", frames("{type: frames, frames: 3, frame: 2}"),
     L + r"unknown key 'discretization\.frame' \(expected one of: type, frames, positions, weights, sample_grid, "
         r"frame_type, placement, frame_mass\)"),
    ("frames.not_a_mapping", frames("[frames, 3]"),
     L + r"discretization: expected a mapping with keys type, frames, positions"),
    ("frames.grid_zero", frames("{type: frames, frames: 3, sample_grid: [0, 2, 2]}"),
     L + r"discretization\.sample_grid\[0\]: expected an integer in \[1, 100000\], got '0'"),
    ("frames.grid_negative", frames("{type: frames, frames: 3, sample_grid: [2, -2, 2]}"),
     L + r"discretization\.sample_grid\[1\]: expected an integer in \[1, 100000\], got '-2'"),
    ("frames.grid_too_fine", frames("{type: frames, frames: 3, sample_grid: [2, 2, 1000000]}"),
     L + r"discretization\.sample_grid\[2\]: expected an integer in \[1, 100000\], got '1000000'"),
    ("frames.grid_two", frames("{type: frames, frames: 3, sample_grid: [2, 2]}"),
     L + r"discretization\.sample_grid: expected a list of 3 integers >= 1 \[nx, ny, nz\].*got a list of 2 entries"),
    ("frames.grid_memory", frames("{type: frames, frames: 3, sample_grid: [100000, 100000, 100000]}"),
     r"memory: \S*job\.yaml:\d+: discretization: 3 rigid frames with sample_grid \[100000, 100000, 100000\] need "
     r"about [\d.]+ [MGT]B on every rank \(the dense frame system and the voxel sums, held whole by each rank\), more "
     r"than a node's .* per rank can hold: use fewer frames or a coarser sample_grid"),
    ("frames.count_memory", BOX.replace("cells: [2, 2, 2]", "cells: [40, 40, 40]") + STVK + CLAMP +
     "discretization: {type: frames, frames: 60000}\n",
     # the plan before the input (issue 50) counts the frames' per-tet influences and refuses first
     r"memory: \S*job\.yaml:(\d+: discretization: 60000 rigid frames need about [\d.]+ [MGT]B on every rank|"
     r" mesh\.generate, a box of 40 x 40 x 40 cells .* is too large for this machine)"),
    ("frames.newmark", frames("{type: frames, frames: 3}", "analysis: {type: dynamic, dt: 0.01, end_time: 0.02, "
                              "integrator: newmark}\n"),
     L + r"discretization: type frames integrates in time with linearized-euler \(the paper's step\) or "
         r"backward-euler \(its Newton solve, needed with obstacles\) only, got analysis\.integrator 'newmark'"),
    ("frames.position_based_obstacles", frames("{type: frames, frames: 2}", FRAMES_FLOOR.format("") +
                                               "analysis: {type: dynamic, dt: 0.01, end_time: 0.02, "
                                               "integrator: position-based}\n"),
     L + r"discretization: type frames integrates in time with linearized-euler .* got analysis\.integrator "
         r"'position-based'"),
    ("frames.frame_mass_unknown", frames("{type: frames, frames: 3, frame_mass: consistent}"),
     L + r"discretization\.frame_mass: expected one of: blocks, weighted, got 'consistent'"),
    ("frames.frame_mass_for_nodes", frames("{type: nodes, frame_mass: weighted}"),
     L + r"discretization\.frame_mass: only for type frames \(type is nodes\)"),
    ("frames.membrane", SHEET + MEMBRANE + SHEET_CLAMP + "discretization: {type: frames, frames: 3}\n",
     L + r"materials\[0\]: discretization type frames evaluates isotropic StVK at the tets"),
    # ---- analysis.position_based -----------------------------------------------------------------------------------
    ("pbd.iterations_zero", pbd("{iterations: 0}"),
     L + r"analysis\.position_based\.iterations: expected an integer in \[1, 10000\], got '0'"),
    ("pbd.iterations_negative", pbd("{iterations: -5}"),
     L + r"analysis\.position_based\.iterations: expected an integer in \[1, 10000\], got '-5'"),
    ("pbd.iterations_huge", pbd("{iterations: 2000000000}"),
     L + r"analysis\.position_based\.iterations: expected an integer in \[1, 10000\], got '2000000000'"),
    ("pbd.iterations_fraction", pbd("{iterations: 1.5}"),
     L + r"analysis\.position_based\.iterations: expected an integer in \[1, 10000\], got '1\.5'"),
    ("pbd.iterations_string", pbd("{iterations: many}"),
     L + r"analysis\.position_based\.iterations: expected an integer in \[1, 10000\], got 'many'"),
    ("pbd.sweep_unknown", pbd("{sweep: gauss-seidel}"),
     L + r"analysis\.position_based\.sweep: expected one of: colored, jacobi, got 'gauss-seidel'"),
    ("pbd.xpbd_number", pbd("{xpbd: 3}"),
     L + r"analysis\.position_based\.xpbd: expected true or false, got '3'"),
    ("pbd.damping_one", pbd("{velocity_damping: 1}"),
     L + r"analysis\.position_based\.velocity_damping: expected a number in \[0, 1\), got '1'"),
    ("pbd.damping_negative", pbd("{velocity_damping: -0.1}"),
     L + r"analysis\.position_based\.velocity_damping: expected a number in \[0, 1\), got '-0\.1'"),
    ("pbd.damping_nan", pbd("{velocity_damping: .nan}"),
     L + r"analysis\.position_based\.velocity_damping: expected a number in \[0, 1\), got '\.nan'"),
    ("pbd.damping_inf", pbd("{velocity_damping: .inf}"),
     L + r"analysis\.position_based\.velocity_damping: expected a number in \[0, 1\), got '\.inf'"),
    ("pbd.inversion_unknown", pbd("{inversion: yes}"),
     L + r"analysis\.position_based\.inversion: expected one of: svd, none, got 'yes'"),
    ("pbd.unknown_key", pbd("{iteration: 3}"),
     L + r"unknown key 'analysis\.position_based\.iteration' \(expected one of: iterations, sweep, xpbd, "
         r"velocity_damping, inversion, acceleration, spectral_radius\)"),
    ("pbd.not_a_mapping", pbd("[10]"),
     L + r"analysis\.position_based: expected a mapping with keys iterations, sweep"),
    ("pbd.empty", pbd(""),
     L + r"analysis\.position_based: expected a mapping with keys iterations, sweep.*got an empty value"),
    ("pbd.other_integrator", BOX + STVK + CLAMP + "analysis:\n  type: dynamic\n  dt: 0.01\n  end_time: 0.02\n"
     "  integrator: newmark\n  position_based: {iterations: 3}\n",
     L + r"analysis\.position_based: only for integrator position-based \(analysis\.integrator is 'newmark'\)"),
    ("pbd.static", BOX + STVK + CLAMP + "analysis:\n  type: static\n  position_based: {iterations: 3}\n",
     L + r"analysis\.position_based: only for analysis type dynamic"),
    ("pbd.acceleration_unknown", pbd("{acceleration: nesterov}"),
     L + r"analysis\.position_based\.acceleration: expected one of: none, chebyshev, got 'nesterov'"),
    ("pbd.spectral_radius_without_chebyshev", pbd("{spectral_radius: 0.9}"),
     L + r"analysis\.position_based\.spectral_radius: only with acceleration: chebyshev"),
    ("pbd.chebyshev_missing_radius", pbd("{acceleration: chebyshev}"),
     L + r"missing required key 'analysis\.position_based\.spectral_radius'"),
    ("pbd.chebyshev_jacobi", pbd("{acceleration: chebyshev, sweep: jacobi, spectral_radius: 0.9}"),
     L + r"analysis\.position_based\.acceleration: chebyshev accelerates the coloured XPBD sweep"),
    ("pbd.spectral_radius_one", pbd("{acceleration: chebyshev, spectral_radius: 1}"),
     L + r"analysis\.position_based\.spectral_radius: expected a number in \(0, 1\), got '1'"),
    ("pbd.spectral_radius_nan", pbd("{acceleration: chebyshev, spectral_radius: .nan}"),
     L + r"analysis\.position_based\.spectral_radius: expected a number in \(0, 1\), got '\.nan'"),
    ("pbd.spectral_radius_zero", pbd("{acceleration: chebyshev, spectral_radius: 0}"),
     L + r"analysis\.position_based\.spectral_radius: expected a number in \(0, 1\), got '0'"),
    ("pbd.diverges", BOX + "materials:\n  - model: stvk\n    young: 1e30\n    poisson: 0.3\n" + CLAMP + PBD +
     "  position_based: {xpbd: false, sweep: jacobi}\n  initial_velocity: [1e307, -1e307, 1e307]\n",
     r"position-based: time step 1 \(t = 0\.01\d*\): the (kinetic energy is|positions are) no longer finite"),
    # ---- plasticity -------------------------------------------------------------------------------------------------
    ("plasticity.yield_negative", plastic("{yield: -0.1, creep: 1, max: 0.1}"),
     L + r"materials\[0\]\.plasticity\.yield: expected a non-negative number \(the yield strain gamma_yield\), "
         r"got '-0\.1'"),
    ("plasticity.yield_nan", plastic("{yield: .nan, creep: 1, max: 0.1}"),
     L + r"materials\[0\]\.plasticity\.yield: expected a non-negative number .* got '\.nan'"),
    ("plasticity.creep_negative", plastic("{yield: 0.01, creep: -1, max: 0.1}"),
     L + r"materials\[0\]\.plasticity\.creep: expected a non-negative number \(the creep rate gamma_creep, 1/time\)"),
    ("plasticity.creep_inf", plastic("{yield: 0.01, creep: .inf, max: 0.1}"),
     L + r"materials\[0\]\.plasticity\.creep: expected a non-negative number .* got '\.inf'"),
    ("plasticity.creep_over_one_per_step", plastic("{yield: 0.01, creep: 1e300, max: 1e300}"),
     L + r"materials\[0\]\.plasticity\.creep: expected at most 1/dt = 100 \(.*\), got 1e\+300"),
    ("plasticity.max_negative", plastic("{yield: 0.01, creep: 1, max: -1}"),
     L + r"materials\[0\]\.plasticity\.max: expected a non-negative number \(the largest plastic strain norm"),
    ("plasticity.max_string", plastic("{yield: 0.01, creep: 1, max: big}"),
     L + r"materials\[0\]\.plasticity\.max: expected a non-negative number .* got 'big'"),
    ("plasticity.missing_max", plastic("{yield: 0.01, creep: 1}"),
     L + r"missing required key 'materials\[0\]\.plasticity\.max'"),
    ("plasticity.unknown_key", plastic("{yield: 0.01, creep: 1, max: 0.1, rate: 2}"),
     L + r"unknown key 'materials\[0\]\.plasticity\.rate' \(expected one of: yield, creep, max\)"),
    ("plasticity.scalar", plastic("0.1"),
     L + r"materials\[0\]\.plasticity: expected a mapping with keys yield, creep, max, got '0\.1'"),
    ("plasticity.static", plastic("{yield: 0.01, creep: 1, max: 0.1}", analysis="analysis: {type: static}\n"),
     L + r"materials\[0\]\.plasticity: only for analysis\.type dynamic with integrator position-based"),
    ("plasticity.inversion_svd", plastic("{yield: 0.01, creep: 1, max: 0.1}", inversion="svd"),
     L + r"materials\[0\]\.plasticity: plastic materials need analysis\.position_based\.inversion: none"),
    ("plasticity.membrane", SHEET + MEMBRANE + "    plasticity: {yield: 0.01, creep: 1, max: 0.1}\n" + SHEET_CLAMP,
     L + r"materials\[0\]\.plasticity: only for model stvk or stvk-tl \(StVK on the elastic strain\), got model "
         r"'trbs'"),
    # ---- bending ----------------------------------------------------------------------------------------------------
    ("bending.negative", bending("{stiffness: -1}"),
     L + r"materials\[0\]\.bending\.stiffness: expected a non-negative number \(bending stiffness kb\), got '-1'"),
    ("bending.nan", bending("{stiffness: .nan}"),
     L + r"materials\[0\]\.bending\.stiffness: expected a non-negative number \(bending stiffness kb\), got '\.nan'"),
    ("bending.inf", bending("{stiffness: .inf}"),
     L + r"materials\[0\]\.bending\.stiffness: expected a non-negative number \(bending stiffness kb\), got '\.inf'"),
    ("bending.huge", bending("{stiffness: 1e300}"),
     # a finite stiffness the reader takes; the step's NaN residual is cut and cut, then reported (no NaN output)
     r"time step 1 \(t = 0\.000000 -> 0\.010000\) failed even after halving the step 6 times"),
    ("bending.string", bending("{stiffness: stiff}"),
     L + r"materials\[0\]\.bending\.stiffness: expected a non-negative number \(bending stiffness kb\), got 'stiff'"),
    ("bending.missing", bending("{}"),
     L + r"missing required key 'materials\[0\]\.bending\.stiffness'"),
    ("bending.unknown_key", bending("{stiffness: 1, kb: 1}"),
     L + r"unknown key 'materials\[0\]\.bending\.kb' \(expected one of: stiffness\)"),
    ("bending.scalar", bending("0.5"),
     L + r"materials\[0\]\.bending: expected a mapping with keys stiffness, got '0\.5'"),
    ("bending.tet_model", BOX + STVK + "    bending: {stiffness: 1}\n" + CLAMP,
     L + r"materials\[0\]\.bending: only for membrane models"),
    # ---- analysis.initial_state -------------------------------------------------------------------------------------
    ("initial_state.unknown", newton_dynamic("equilibrium"),
     L + r"analysis\.initial_state: expected one of: rest, static, got 'equilibrium'"),
    ("initial_state.list", newton_dynamic("[rest]"),
     L + r"analysis\.initial_state: expected one of: rest, static, got a list of 1 entry"),
    ("initial_state.flatten_newton", newton_dynamic("{flatten: z}"),
     L + r"analysis\.initial_state: expected one of: rest, static, got a mapping"),
    ("initial_state.static_analysis", BOX + STVK + CLAMP + "analysis: {type: static, initial_state: rest}\n",
     L + r"analysis\.initial_state: only for analysis type dynamic"),
    ("initial_state.pbd_static", pbd(initial_state="static"),
     L + r"analysis\.initial_state: expected 'rest' or a mapping with one key, flatten or mirror \(integrator "
         r"position-based\), got 'static'"),
    ("initial_state.pbd_axis", pbd(initial_state="{flatten: w}"),
     L + r"analysis\.initial_state\.flatten: expected one of: x, y, z, got 'w'"),
    ("initial_state.pbd_axis_list", pbd(initial_state="{mirror: [x]}"),
     L + r"analysis\.initial_state\.mirror: expected one of: x, y, z, got a list of 1 entry"),
    ("initial_state.pbd_two_keys", pbd(initial_state="{flatten: x, mirror: y}"),
     L + r"analysis\.initial_state: expected 'rest' or a mapping with one key, flatten or mirror"),
    ("initial_state.pbd_unknown_key", pbd(initial_state="{squash: x}"),
     L + r"unknown key 'analysis\.initial_state\.squash' \(expected one of: flatten, mirror\)"),
    ("initial_state.frames_static", frames("{type: frames, frames: 3}", "analysis: {type: dynamic, dt: 0.01, "
                                           "end_time: 0.02, integrator: linearized-euler, initial_state: static}\n"),
     L + r"discretization: type frames starts dynamics at rest only"),
    # ---- output (issue 52) ------------------------------------------------------------------------------------------
    ("output.format", BOX + STVK + CLAMP + "output: {format: hdf5}\n",
     L + r"output\.format: expected one of: vtu, xdmf, got 'hdf5'"),
    ("output.compression", BOX + STVK + CLAMP + "output: {format: xdmf, compression: zstd}\n",
     L + r"output\.compression: expected one of: none, gzip, got 'zstd'"),
    ("output.gzip_vtu", BOX + STVK + CLAMP + "output: {compression: gzip}\n",
     L + r"output\.compression: gzip needs format: xdmf"),
    ("output.precision", BOX + STVK + CLAMP + "output: {format: xdmf, precision: half}\n",
     L + r"output\.precision: expected one of: single, double, got 'half'"),
    ("output.single_vtu", BOX + STVK + CLAMP + "output: {precision: single}\n",
     L + r"output\.precision: single needs format: xdmf"),
    ("output.field_unknown", BOX + STVK + CLAMP + "output: {fields: [displacement, strain]}\n",
     L + r"output\.fields\[1\]: expected one of: displacement, velocity, force, green_strain, stress, von_mises, "
         r"volume_ratio, rank, region, plastic_strain, contact_gap, contact_force, got 'strain'"),
    ("output.field_twice", BOX + STVK + CLAMP + "output: {fields: [stress, stress]}\n",
     L + r"output\.fields\[1\]: 'stress' is listed twice"),
    ("output.fields_empty", BOX + STVK + CLAMP + "output: {fields: []}\n",
     L + r"output\.fields: expected a non-empty list of field names, got a list of 0 entries"),
    ("output.fields_scalar", BOX + STVK + CLAMP + "output: {fields: stress}\n",
     L + r"output\.fields: expected a list of field names, got 'stress'"),
    # ---- obstacles, contact ----------------------------------------------------------------------------------------
    ("obstacles.overlap_barrier", obstacle_job("{name: wall, shape: box, box: [[0.9, -1, -1], [3, 2, 2]]}"),
     L + r"obstacles\[1\] \(wall\): mesh vertex \d+ \(0-based, in the mesh's order\) at \([^)]*\) is inside the "
         r"obstacle at the start, 0\.1 deep \(\d+ boundary vertices are\); the barrier method needs every boundary "
         r"vertex outside"),
    ("obstacles.touching_barrier", obstacle_job("{name: wall, shape: plane, point: [1, 0, 0], normal: [-1, 0, 0]}"),
     L + r"obstacles\[1\] \(wall\): mesh vertex \d+ .* is on the surface of the obstacle at the start, 0 deep"),
    ("obstacles.zero_normal", obstacle_job("{shape: plane, point: [0, 0, -1], normal: [0, 0, 0]}"),
     L + r"obstacles\[1\]\.normal: expected a unit normal, got \[0, 0, 0\]"),
    ("obstacles.non_unit_normal", obstacle_job("{shape: plane, point: [0, 0, -1], normal: [0, 0, 2]}"),
     L + r"obstacles\[1\]\.normal: expected a unit normal \(length 1\), got one of length 2; the unit one is "
         r"\[0, 0, 1\]"),
    ("obstacles.non_unit_axis", obstacle_job("{shape: cylinder, center: [3, 0, 0], axis: [1, 1, 0], radius: 0.5, "
                                             "length: 1}"),
     L + r"obstacles\[1\]\.axis: expected a unit axis \(length 1\), got one of length 1\.41421356"),
    ("obstacles.negative_friction", obstacle_job("{shape: sphere, center: [3, 0, 0], radius: 0.5, friction: -0.1}"),
     L + r"obstacles\[1\]\.friction: expected a non-negative number \(Coulomb's coefficient\), got '-0\.1'"),
    ("obstacles.shape_key_of_other_shape", obstacle_job("{shape: plane, point: [0, 0, -1], normal: [0, 0, 1], "
                                                        "radius: 2}"),
     L + r"obstacles\[1\]\.radius: not a key of shape plane \(its own keys: point, normal"),
    ("obstacles.unknown_key", obstacle_job("{shape: sphere, center: [3, 0, 0], radius: 0.5, frcition: 0.2}"),
     L + r"unknown key 'obstacles\[1\]\.frcition' \(expected one of: name, shape, .*\); did you mean 'friction'\?"),
    ("obstacles.shape_typo", obstacle_job("{shape: sphre, center: [3, 0, 0], radius: 0.5}"),
     L + r"obstacles\[1\]\.shape: expected one of: plane, box, sphere, cylinder, mesh, got 'sphre' "
         r"\(did you mean 'sphere'\?\)"),
    ("obstacles.empty_box", obstacle_job("{shape: box, box: [[3, 0, 0], [4, 0, 1]]}"),
     L + r"obstacles\[1\]\.box: expected the first corner below the second in every component"),
    ("obstacles.duplicate_name", obstacle_job("{name: floor, shape: sphere, center: [3, 0, 0], radius: 0.5}"),
     L + r"obstacles\[1\]: the name 'floor' is used by an earlier obstacle"),
    ("obstacles.missing_file", obstacle_job("{shape: mesh, file: nowhere.stl}"),
     L + r"obstacles\[1\]\.file: file 'nowhere\.stl' not found"),
    ("obstacles.file_not_stl", obstacle_job("{shape: mesh, file: pusher.obj}"),
     L + r"obstacles\[1\]\.file: expected a Gmsh \.msh or an \.stl file, got 'pusher\.obj'",
     {"pusher.obj": b"v 0 0 0\n"}),
    ("obstacles.stl_garbage", obstacle_job("{name: pusher, shape: mesh, file: pusher.stl}"),
     L + r"obstacles\[1\] \(pusher\): .*pusher\.stl: not an STL file",
     {"pusher.stl": b"\x01\x02garbage"}),
    ("obstacles.stl_truncated_ascii", obstacle_job("{name: pusher, shape: mesh, file: pusher.stl}"),
     L + r"obstacles\[1\] \(pusher\): .*pusher\.stl:\d+: ASCII STL: ",
     {"pusher.stl": b"solid x\nfacet normal 0 0 1\nouter loop\nvertex 3 0 0\nvertex 4 0 zero\n"}),
    ("obstacles.stl_empty", obstacle_job("{name: pusher, shape: mesh, file: pusher.stl}"),
     L + r"obstacles\[1\] \(pusher\): .*pusher\.stl: the STL file has no triangles",
     {"pusher.stl": binary_stl([])}),
    ("obstacles.stl_degenerate", obstacle_job("{name: pusher, shape: mesh, file: pusher.stl}"),
     L + r"obstacles\[1\] \(pusher\): .*pusher\.stl: triangle 1 is degenerate \(zero area\)",
     {"pusher.stl": binary_stl([[(3, 0, 0), (4, 0, 0), (3, 1, 0)], [(3, 0, 0), (4, 0, 0), (5, 0, 0)]])}),
    ("contact.negative_distance", obstacle_job("{shape: sphere, center: [3, 0, 0], radius: 0.5}", "{distance: -1e-3}"),
     L + r"contact\.distance: expected a positive number or auto, got '-1e-3'"),
    ("contact.zero_stiffness", obstacle_job("{shape: sphere, center: [3, 0, 0], radius: 0.5}", "{stiffness: 0}"),
     L + r"contact\.stiffness: expected a positive number or auto, got '0'"),
    ("contact.negative_friction_velocity", obstacle_job("{shape: sphere, center: [3, 0, 0], radius: 0.5}",
                                                        "{friction_velocity: -1}"),
     L + r"contact\.friction_velocity: expected a positive number or auto, got '-1'"),
    ("contact.method_typo", obstacle_job("{shape: sphere, center: [3, 0, 0], radius: 0.5}", "{method: barier}"),
     L + r"contact\.method: expected one of: barrier, penalty, got 'barier' \(did you mean 'barrier'\?\)"),
    ("contact.without_obstacles", BOX + STVK + CLAMP + "contact: {method: penalty}\n",
     L + r"contact: given, but the job has no obstacles"),
    ("contact.self_friction_negative", BOX + STVK + CLAMP + "contact: {self: true, friction: -0.2}\n",
     L + r"contact\.friction: expected a non-negative number \(Coulomb's coefficient between parts of the body\), "
     r"got '-0\.2'"),
    ("contact.self_friction_without_self", obstacle_job("{shape: sphere, center: [3, 0, 0], radius: 0.5}",
                                                        "{friction: 0.2}"),
     L + r"contact\.friction: friction between parts of the body needs self: true"),
    ("contact.self_penalty", BOX + STVK + CLAMP + "contact: {self: true, method: penalty}\n",
     L + r"contact\.self: self-contact needs method barrier"),
    ("contact.self_linearized_euler", BOX + STVK + CLAMP + "contact: {self: true}\n"
     "analysis: {type: dynamic, dt: 0.01, end_time: 0.02, integrator: linearized-euler}\n",
     L + r"contact\.self: supported with the Newton solvers \(a static analysis or integrator backward-euler or "
     r"newmark\) and integrator position-based"),
    ("obstacles.linearized_euler", obstacle_job("{shape: sphere, center: [3, 0, 0], radius: 0.5}", "",
                                                "analysis: {type: dynamic, dt: 0.01, end_time: 0.02, "
                                                "integrator: linearized-euler}\n"),
     L + r"obstacles: not supported with integrator linearized-euler"),
    # Frame models take obstacles (fixed or moving) in a static analysis or with backward-euler
    # (frames/frames_contact.hpp); their linearised step has no line search for the barrier.
    ("obstacles.frames_linearized_euler", frames("{type: frames, frames: 2}", FRAMES_FLOOR.format("") +
                                                 "analysis: {type: dynamic, dt: 0.01, end_time: 0.02, "
                                                 "integrator: linearized-euler}\n"),
     L + r"obstacles: not supported with integrator linearized-euler yet \(contact needs a Newton solve"),
    ("obstacles.frames_overlap", frames("{type: frames, frames: 2}",
                                        "obstacles:\n  - {name: wall, shape: box, box: [[0.9, -1, -1], [3, 2, 2]]}\n"),
     L + r"obstacles\[0\] \(wall\): mesh vertex \d+ \(0-based, in the mesh's order\) at \([^)]*\) is inside the "
         r"obstacle at the start, 0\.1 deep"),
]


def run_case(args, name, text, pattern, files=None):
    directory = os.path.join(args.out, name)
    os.makedirs(directory, exist_ok=True)
    job = os.path.join(directory, "job.yaml")
    with open(job, "w") as f:
        f.write(text)
    for file_name, data in (files or {}).items():
        with open(os.path.join(directory, file_name), "wb") as f:
            f.write(data)
    command = [args.mpiexec, "-n", str(args.np), "--oversubscribe", args.edgefem, "run", job, "--quiet",
               "--output", os.path.join(directory, "out")]
    start = time.time()
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=args.timeout,
                              text=True, errors="replace")
    except subprocess.TimeoutExpired as e:
        return None, f"hung: no exit in {args.timeout} s (output: {(e.stdout or '')[-400:]!r})"
    output = done.stdout
    problems = []
    if done.returncode != 1:
        problems.append(f"exit status {done.returncode}, expected 1")
    for sign in ("PETSC ERROR", "MPI_ABORT", "Segmentation", "signal", "terminate called"):
        if sign in output:
            problems.append(f"'{sign}' in the output")
    if not re.search(pattern, output):
        problems.append(f"message not found: /{pattern}/")
    if problems:
        return None, "; ".join(problems) + "\n--- output ---\n" + output[-1500:]
    message = next((line for line in output.splitlines() if "error" in line), "")
    return f"  ok {name} ({time.time() - start:.1f} s): {message[:200]}", None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mpiexec", default="mpiexec")
    parser.add_argument("--np", type=int, default=1)
    parser.add_argument("--edgefem", required=False)
    parser.add_argument("--out", default="bad_input")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--jobs", type=int, default=4, help="rows run at the same time (default 4)")
    parser.add_argument("--only", help="run the rows whose name contains this")
    parser.add_argument("--list", action="store_true", help="print the rows' names and jobs")
    args = parser.parse_args()
    names = [c[0] for c in CASES]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        sys.exit(f"check_bad_input: duplicate row names {sorted(duplicates)}")
    rows = [c for c in CASES if not args.only or args.only in c[0]]
    if args.list:
        for name, text, pattern, *_ in rows:
            print(f"== {name}: /{pattern}/\n{text}")
        return
    if not args.edgefem:
        sys.exit("check_bad_input: --edgefem is required")
    failures = []
    # The rows run --jobs at a time: a refused job is ~0.1 s of CPU, but mpiexec waits about a second after a rank
    # exits non-zero before it ends the job, so one row after another left the cores idle (213 s on 2 ranks).
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = pool.map(lambda row: run_case(args, row[0], row[1], row[2], *row[3:]), rows)
        for (name, *_), (ok, problem) in zip(rows, results):
            if problem:
                print(f"  FAILED {name}: {problem}")
                failures.append(name)
            else:
                print(ok)
    if failures:
        sys.exit(f"check_bad_input: {len(failures)} of {len(rows)} rows failed on {args.np} rank(s): "
                 + ", ".join(failures))
    print(f"check_bad_input: {len(rows)} bad jobs refused on {args.np} rank(s)")


if __name__ == "__main__":
    main()
