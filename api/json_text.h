#pragma once
// JSON text fragments shared by the hand-written JSON formatters (plan, activations): they write JSON
// text directly, in a fixed key order and layout, so goldens stay readable and byte-stable.

#include <cstdint>
#include <span>
#include <string>

#include "core/mesh.h"
#include "core/partition_spec.h"

namespace easyplan::api {

/// A JSON string literal; invalid UTF-8 is replaced, never thrown on.
std::string Quoted(const std::string& text);
/// A PartitionSpec's JSON: per dim null, "axis" or ["a", "b"].
std::string SpecJson(const PartitionSpec& spec);
/// [d0, d1, ...] on one line.
std::string DimsJson(std::span<const int64_t> dims);
/// {"axis_names", "shape", "devices"} and, for a hybrid mesh, "dcn_shape".
std::string MeshJson(const Mesh& mesh);

}  // namespace easyplan::api
