// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// \file constant_stiffness.hpp
/// Private to materials/: the small-strain models ("linear" for tetrahedra, "linear-membrane" for triangles)
/// are one formulation with a constant stiffness K0, taken from another formulation's tangent at rest.
#include <memory>
#include <span>
#include <string>

#include "materials/formulation.hpp"

namespace edgefem {

/// f = K0 (x - X), W = (x - X)^T K0 (x - X) / 2, K = K0, where K0 = source's tangent at x = X (coords) and the
/// block pattern is source's (touched vertices' diagonal blocks first, then (v0, v1), (v1, v0) per edge).
/// K0 is stored as one 3x3 block per touched vertex and one per edge ((v1, v0) is the transpose); force() is a
/// race-free block SpMV gathered per vertex, energy() an ordered sum (bitwise independent of the thread count).
std::unique_ptr<TetFormulation> make_constant_stiffness(std::string name, std::span<const double> coords,
                                                        const TetFormulation& source);

}  // namespace edgefem
