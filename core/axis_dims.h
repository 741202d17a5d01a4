#ifndef EASYPLAN_CORE_AXIS_DIMS_H_
#define EASYPLAN_CORE_AXIS_DIMS_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace easyplan {

/// Renders mesh dims the way messages show them: "[1, -1, 1, 1, 1]".
std::string FormatAxisDims(std::span<const int64_t> dims);

/// Checks mesh axis sizes as eformer's create_mesh accepts them: every entry >= 1 or -1, at most one -1.
/// Errors (BadInput, no location) name the offending entry.
Status ValidateAxisDims(std::span<const int64_t> dims, const std::string& what);

/// Replaces the one -1 with devices / product(others), numpy-reshape style, or checks that the product
/// equals `devices` when there is no -1. REQUIRES: ValidateAxisDims(dims).ok(), devices >= 1.
/// Errors state the numbers, e.g. "cannot fill the -1 in sharding_axis_dims [2, -1, 3] for 8 devices:
/// 8 is not divisible by the product of the other axes (6)".
StatusOr<std::vector<int64_t>> FillAxisDims(std::span<const int64_t> dims, int64_t devices, const std::string& what);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_AXIS_DIMS_H_
