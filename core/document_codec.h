#ifndef EASYPLAN_CORE_DOCUMENT_CODEC_H_
#define EASYPLAN_CORE_DOCUMENT_CODEC_H_

// Parsed documents as compact bytes, so the data files embedded at build time (schemas/, rules/)
// are parsed once, by the build, instead of on every run. yaml-cpp reads about 10 MB/s: the five
// files `validate` needs took 1.9 ms to parse, a tenth of its wall time on a 92k-tensor tree, and
// decode in a few tens of microseconds. A decoded document equals the parsed one: the same values
// with the same types (int64 stays int64), keys in file order, every position and every duplicate
// key.
//
// The format is private to one build (the encoder and the decoder are compiled together): a magic
// tag, the value (a type byte, then fixed 8-byte little-endian numbers, or a varint length and the
// items), the positions in pointer order, the duplicate keys.

#include <string>
#include <string_view>

#include "core/document.h"
#include "core/status.h"

namespace easyplan {

/// The bytes of `doc` without its file name. Internal error for a value no YAML or JSON parse
/// produces (binary data).
StatusOr<std::string> EncodeDocument(const Document& doc);

/// The document `bytes` encode, named `file`. Corrupt or truncated bytes are an Internal error (the
/// bytes come from the build, never from a user).
StatusOr<Document> DecodeDocument(std::string_view bytes, std::string file);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_DOCUMENT_CODEC_H_
