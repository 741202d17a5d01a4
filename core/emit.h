#ifndef EASYPLAN_CORE_EMIT_H_
#define EASYPLAN_CORE_EMIT_H_

// Deterministic text output of Json values: the same value always gives the same bytes, keys stay
// in stored order, and every output ends with a newline.

#include <string>

#include "core/json.h"

namespace easyplan {

/// 2-space indented JSON, keys in stored order, UTF-8 kept as is (invalid UTF-8 becomes U+FFFD),
/// ending with "\n". Numbers render as nlohmann does: 500000.0 -> `500000.0`, 1e-05 -> `1e-05`;
/// A NaN or an infinity is a bug in whatever computed it (inputs never hold one: the resolver and the
/// hardware reader refuse them): it throws NonFiniteFigure (core/human.h) naming its JSON pointer,
/// which main() turns into an internal error (exit 3), never `null` or `inf` in an output.
std::string EmitJson(const Json& value);

/// The guard EmitJson and EmitYaml apply, for a writer of JSON text of its own (the report page):
/// throws NonFiniteFigure naming the JSON pointer of the first NaN or infinity in `value`.
void RequireFinite(const Json& value);

/// Block-style YAML that a YAML 1.2 core-schema reader (ParseYamlDocument) reads back as `value`:
///
///     name: llama
///     mesh_shape: [1, -1, 1, 1, 1]
///     rope_scaling:
///       factor: 8.0
///     params:
///       - name: "model/embed_tokens/embedding"
///         spec: [fsdp, tp]
///
/// Mappings are `key: value` (`? key` then `: value` for a key over 1000 bytes, since YAML limits
/// implicit keys to 1024 characters); nested mappings and sequences are indented by 2. A sequence of
/// scalars whose flow form fits in 80 columns is written `[a, b]`, other sequences as `- item`
/// blocks (a mapping item starts on the dash line). Empty containers are `{}` and `[]`.
/// Scalars: `null`, `true`/`false`, integers as EmitJson writes them, floats too except that an
/// exponent form gets a ".0" mantissa (1e-05 -> `1.0e-05`) so YAML 1.1 readers such as PyYAML also
/// see a float; a NaN or an infinity throws NonFiniteFigure as in EmitJson. Strings and keys are plain when
/// they match [A-Za-z_][A-Za-z0-9_./-]* and are not a null/bool spelling nor y/n/yes/no/on/off in
/// any case; otherwise JSON-escaped and double-quoted. A top-level scalar is written alone. Ends
/// with "\n".
std::string EmitYaml(const Json& value);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_EMIT_H_
