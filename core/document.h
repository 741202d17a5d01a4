#ifndef EASYPLAN_CORE_DOCUMENT_H_
#define EASYPLAN_CORE_DOCUMENT_H_

// Parsed JSON and YAML documents that remember where each value came from, so diagnostics can say
// "config.json:12:5: error: /rope_scaling/factor: ...". This is the only place that turns text
// into Json; the throws of nlohmann and yaml-cpp are caught here and become a Status.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/limits.h"
#include "core/status.h"

namespace easyplan {

/// A parsed document: its value, the file it came from and the 1-based line:column of every
/// value in the text, keyed by RFC 6901 JSON pointer.
class Document {
 public:
  /// A 1-based line and byte column in the source text; 0 = unknown.
  struct Position {
    int line = 0;
    int column = 0;
    bool operator==(const Position&) const = default;
  };

  /// An empty document: null root, no file, no positions.
  Document() = default;
  /// A document built by code (or by a parser): positions are optional, keyed by JSON pointer.
  Document(std::string file, Json root, std::map<std::string, Position> positions = {},
           std::vector<std::string> duplicate_keys = {});

  const Json& root() const { return root_; }
  /// Positions are not updated when the root is edited: Locate() still answers for the pointers
  /// of the parsed text (and falls back to the nearest recorded ancestor for new ones).
  Json& mutable_root() { return root_; }

  /// The path used in messages ("config.json", "<stdin>").
  const std::string& file() const { return file_; }

  /// file + pointer + 1-based line/column of the value at `pointer` (RFC 6901, "" = root). If the
  /// pointer does not exist, returns the position of the nearest existing ancestor, with `pointer`
  /// still set to the requested pointer. Line and column are 0 when no position is known.
  SourceLoc Locate(std::string_view pointer) const;

  /// The recorded positions, by JSON pointer (for serialising a parsed document).
  const std::map<std::string, Position>& positions() const { return positions_; }

  /// JSON pointers of object keys that appeared more than once in one object (the last value
  /// wins, as in Python's json), in the order of their second appearance, each listed once.
  const std::vector<std::string>& duplicate_keys() const { return duplicate_keys_; }

 private:
  std::string file_;
  Json root_;
  std::map<std::string, Position> positions_;
  std::vector<std::string> duplicate_keys_;
};

/// Parses strict JSON (RFC 8259: no comments, no trailing commas, no NaN). A leading UTF-8 BOM is
/// skipped and not counted in columns. Errors are BadInput at {file, line, column}, e.g.
/// "invalid JSON: expected ',' or '}' after an object member", "invalid JSON: empty document",
/// "integer 9223372036854775808 does not fit in 64 bits". Integers become int64 (never uint64).
/// Nesting deeper than limits.max_depth or more than limits.max_values values is an error (with a
/// note naming the flag that raises the limit). Time and memory are linear in the text's size.
StatusOr<Document> ParseJsonDocument(std::string_view text, std::string file, const Limits& limits = {});

/// Parses one YAML document with YAML 1.2 core-schema resolution of plain scalars: null/Null/NULL/~
/// and empty -> null; true/false/True/False/TRUE/FALSE -> boolean; [-+]?[0-9]+, 0x.., 0o.. ->
/// int64; decimal/exponent forms, .inf, -.inf, .nan -> float; anything else, and every quoted
/// or !!str-tagged scalar, -> string (so `yes`, `on` and `0b1` are strings). Mapping keys must be
/// scalars and are used as strings (a null key becomes "null"). Aliases are expanded; merge keys
/// (`<<: *base`, a YAML 1.1 feature) are not, and stay an ordinary "<<" key. More than one
/// document is an error. An empty stream gives a null root.
/// Nesting deeper than limits.max_depth, or more than limits.max_values values once aliases are
/// expanded (each use counted again: "billion laughs"), is an error.
/// Errors are BadInput "invalid YAML: <reason>" at {file, line, column}.
StatusOr<Document> ParseYamlDocument(std::string_view text, std::string file, const Limits& limits = {});

/// JSON pointer escaping of one reference token ("a/b" -> "a~1b", "~" -> "~0").
std::string PointerToken(std::string_view key);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_DOCUMENT_H_
