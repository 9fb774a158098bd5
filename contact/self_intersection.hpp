// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file self_intersection.hpp
/// An exact triangle-triangle intersection test, for the tests' zero-intersection checks of self-contact: the signs
/// of orientation determinants decide, computed in double precision when a forward error bound proves the sign and
/// else exactly in rational arithmetic (boost::multiprecision::cpp_rational, every double being a rational), so no
/// round-off can hide an intersection or invent one. Closed triangles: touching counts as intersecting. No MPI,
/// no PETSc.
#include <array>
#include <vector>

#include "contact/vec3.hpp"

namespace edgefem::contact {

/// The sign (-1, 0, 1) of det[b - a, c - a, d - a], exactly.
int orient3d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);
/// Whether segment a-b meets triangle (p, q, r) (closed sets), exactly.
bool segment_meets_triangle(const Vec3& a, const Vec3& b, const Vec3& p, const Vec3& q, const Vec3& r);
/// Whether triangles s and t (closed) intersect, exactly.
bool triangles_intersect(const std::array<Vec3, 3>& s, const std::array<Vec3, 3>& t);

/// The number of pairs of triangles (3 vertex indices into x, 3 doubles per vertex) that share no vertex and
/// intersect. Broad phase: the triangles' boxes (BoxTree).
long long count_intersecting_pairs(const std::vector<double>& x, const std::vector<std::array<int, 3>>& triangles);

}  // namespace edgefem::contact
