#ifndef EASYPLAN_CORE_JSON_PARSE_H_
#define EASYPLAN_CORE_JSON_PARSE_H_

// Text -> Json for JSON. ParseJsonDocument is easyplan's own validating parser, which records the
// position of every value (core/document.h) and enforces core/limits.h; ParseJsonValue reads a short
// inline value (`--set KEY=VALUE`) with nlohmann's parser. No module outside core/ parses JSON text
// itself (scripts/check-layering enforces it).

#include <optional>
#include <string>
#include <string_view>

#include "core/document.h"
#include "core/json.h"
#include "core/limits.h"
#include "core/status.h"

namespace easyplan {

/// Parses strict JSON (RFC 8259: no comments, no trailing commas, no NaN). A leading UTF-8 BOM is
/// skipped and not counted in columns. Errors are BadInput at {file, line, column}, e.g.
/// "invalid JSON: expected ',' or '}' after an object member", "invalid JSON: empty document",
/// "integer 9223372036854775808 does not fit in 64 bits". Integers become int64 (never uint64).
/// Nesting deeper than limits.max_depth or more than limits.max_values values is an error (with a
/// note naming the flag that raises the limit). Time and memory are linear in the text's size.
StatusOr<Document> ParseJsonDocument(std::string_view text, std::string file, const Limits& limits = {});

/// Parses `text` as exactly one JSON value with nlohmann's parser, or nullopt when it is not one
/// (then `--set` takes the text as a string). No positions and no limits: the caller measures the
/// value (schemas::ApplySet). Unlike ParseJsonDocument, integers above INT64_MAX that fit in 64 bits
/// become unsigned (the caller reports them), and a float beyond the double range is not JSON.
std::optional<Json> ParseJsonValue(std::string_view text);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_JSON_PARSE_H_
