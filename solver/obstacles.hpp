// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file obstacles.hpp
/// The job's obstacles as geometry (contact/obstacle.hpp): one per `obstacles[]` entry, surfaces read from their
/// files (a Gmsh .msh's triangles or an STL), and where each one is at a time. Every rank builds them all (they are
/// replicated); this is also the entry point of the position-based and frame solvers' contact.
#include <array>
#include <memory>
#include <vector>

#include "contact/obstacle.hpp"
#include "io/job.hpp"

namespace edgefem {

/// One obstacle per job.obstacles entry, placed where the job puts it at time 0. Throws InputError naming the entry
/// (its key and name) and the file for a surface that cannot be read or is degenerate. Not collective.
std::vector<std::unique_ptr<contact::Obstacle>> make_obstacles(const Job& job);

/// The translation of obstacle `spec` at time t (static: the load factor): its motion's schedule (or the default:
/// the load factor, or a ramp over the run) times `translate`; zero without a motion.
std::array<double, 3> obstacle_offset(const Job& job, const ObstacleSpec& spec, double t);

/// Places every obstacle at time t (obstacle_offset).
void place_obstacles(const Job& job, const std::vector<std::unique_ptr<contact::Obstacle>>& obstacles, double t);

}  // namespace edgefem
