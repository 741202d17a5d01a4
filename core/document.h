#ifndef EASYPLAN_CORE_DOCUMENT_H_
#define EASYPLAN_CORE_DOCUMENT_H_

// Parsed JSON and YAML documents that remember where each value came from, so diagnostics can say
// "config.json:12:5: error: /rope_scaling/factor: ...". The parsers that make them are
// ParseJsonDocument (core/json_parse.h) and ParseYamlDocument (core/yaml_parse.h); the decoder of
// build-time encoded documents is core/document_codec.h.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/json.h"
#include "core/json_pointer.h"
#include "core/status.h"

namespace easyplan {

/// A parsed document: its value, the file it came from and the 1-based line:column of every
/// value in the text, keyed by RFC 6901 JSON pointer (core/json_pointer.h).
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
           std::vector<std::string> duplicate_keys = {}, std::map<std::string, Position> first_positions = {});

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

  /// Where the first value of a duplicate key was (Locate() answers with the last, the one used):
  /// file + pointer + line:column, or no line when the parser did not record it (an encoded document).
  SourceLoc LocateFirst(std::string_view duplicate_pointer) const;

  /// "key given twice, at config.json:3:17 and config.json:7:17; the last value is used": the message
  /// of a duplicate key's warning (or error under --strict), naming the line of each value.
  std::string DuplicateKeyMessage(std::string_view duplicate_pointer) const;

  /// One warning per duplicate key, at its last value, with DuplicateKeyMessage: what a reader of a
  /// hand-edited file (a --rules file, a --hardware profile) reports, or refuses under --strict.
  std::vector<Diag> DuplicateKeyWarnings() const;

 private:
  std::string file_;
  Json root_;
  std::map<std::string, Position> positions_;
  std::vector<std::string> duplicate_keys_;
  std::map<std::string, Position> first_positions_;  ///< by duplicate key's pointer
};

}  // namespace easyplan

#endif  // EASYPLAN_CORE_DOCUMENT_H_
