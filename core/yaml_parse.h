#ifndef EASYPLAN_CORE_YAML_PARSE_H_
#define EASYPLAN_CORE_YAML_PARSE_H_

// Text -> Json for YAML, through yaml-cpp's event parser, with the position of every value
// (core/document.h). The only place that calls yaml-cpp and catches its exceptions; no module
// outside core/ parses YAML text itself (scripts/check-layering enforces it).

#include <string>
#include <string_view>

#include "core/document.h"
#include "core/limits.h"
#include "core/status.h"

namespace easyplan {

/// Parses one YAML document with YAML 1.2 core-schema resolution of plain scalars: null/Null/NULL/~
/// and empty -> null; true/false/True/False/TRUE/FALSE -> boolean; [-+]?[0-9]+, 0x.., 0o.. ->
/// int64; decimal/exponent forms, .inf, -.inf, .nan -> float; anything else, and every quoted
/// or !!str-tagged scalar, -> string (so `yes`, `on` and `0b1` are strings). Mapping keys must be
/// scalars and are used as strings (a null key becomes "null"). Aliases are expanded; merge keys
/// (`<<: *base`, a YAML 1.1 feature) are not, and stay an ordinary "<<" key. More than one
/// document is an error. An empty stream gives a null root.
/// Nesting deeper than limits.max_depth, or more than limits.max_values values once aliases are
/// expanded (each use counted again: "billion laughs"), is an error; so is an expansion of more than
/// limits.max_input_bytes bytes (each value's scalar and JSON pointer, each use of an alias counted
/// again), checked as the document is expanded, before the bytes past the limit are allocated. Without
/// aliases the scalars are part of the input, so only paths under long keys can reach it.
/// Errors are BadInput "invalid YAML: <reason>" at {file, line, column}.
StatusOr<Document> ParseYamlDocument(std::string_view text, std::string file, const Limits& limits = {});

}  // namespace easyplan

#endif  // EASYPLAN_CORE_YAML_PARSE_H_
