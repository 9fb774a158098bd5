#pragma once
/// \file error.hpp
/// Forwarding header: InputError and the rest of the error hierarchy live in core/error.hpp.
#include "core/error.hpp"
