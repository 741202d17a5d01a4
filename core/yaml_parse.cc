#include "core/yaml_parse.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdint>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "core/json.h"
#include "core/json_pointer.h"
#include "core/key_tracker.h"
#include "core/number_literal.h"
#include "core/utf8.h"

namespace easyplan {
namespace {

using Position = Document::Position;
using PositionMap = std::map<std::string, Position>;

// yaml-cpp nodes -> Json with core-schema resolution.

/// Matches [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? (YAML 1.2 core float).
bool IsYamlDecimalFloat(std::string_view s) {
  size_t p = 0;
  const auto digits = [&] {
    const size_t first = p;
    while (p < s.size() && IsAsciiDigit(s[p])) ++p;
    return p - first;
  };
  if (p < s.size() && (s[p] == '-' || s[p] == '+')) ++p;
  if (p < s.size() && s[p] == '.') {
    ++p;
    if (digits() == 0) return false;
  } else {
    if (digits() == 0) return false;
    if (p < s.size() && s[p] == '.') {
      ++p;
      digits();
    }
  }
  if (p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
    ++p;
    if (p < s.size() && (s[p] == '-' || s[p] == '+')) ++p;
    if (digits() == 0) return false;
  }
  return p == s.size();
}

bool AllOf(std::string_view s, bool (*predicate)(char)) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!predicate(c)) return false;
  }
  return true;
}

/// Resolves a plain scalar to a Json value, or returns the error message for out-of-range numbers.
std::optional<std::string> ResolvePlainScalar(const std::string& s, Json* out) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
    *out = nullptr;
    return std::nullopt;
  }
  if (s == "true" || s == "True" || s == "TRUE") {
    *out = true;
    return std::nullopt;
  }
  if (s == "false" || s == "False" || s == "FALSE") {
    *out = false;
    return std::nullopt;
  }
  const std::string_view view(s);
  const auto parse_int = [&](std::string_view digits, int base) -> std::optional<std::string> {
    int64_t value = 0;
    const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
    if (result.ec != std::errc()) return IntegerRangeMessage(s);
    *out = value;
    return std::nullopt;
  };
  const std::string_view unsigned_part = (s[0] == '-' || s[0] == '+') ? view.substr(1) : view;
  if (AllOf(unsigned_part, IsAsciiDigit)) return parse_int(s[0] == '+' ? view.substr(1) : view, 10);
  const auto is_hex = [](char c) { return IsAsciiDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  const auto is_octal = [](char c) { return c >= '0' && c <= '7'; };
  if (view.starts_with("0x") && AllOf(view.substr(2), is_hex)) return parse_int(view.substr(2), 16);
  if (view.starts_with("0o") && AllOf(view.substr(2), is_octal)) {
    return parse_int(view.substr(2), 8);
  }
  if (IsYamlDecimalFloat(view)) {
    const std::optional<double> value = ParseDecimalFloat(view);
    if (!value) return FloatRangeMessage(s);
    *out = *value;
    return std::nullopt;
  }
  if (unsigned_part == ".inf" || unsigned_part == ".Inf" || unsigned_part == ".INF") {
    *out = s[0] == '-' ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return std::nullopt;
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return std::nullopt;
  }
  *out = s;
  return std::nullopt;
}

// A YAML node as the parser's events describe it (what yaml-cpp's own NodeBuilder would build, without
// its reference-counted graph). An alias is the anchored node itself, shared, so its mark is the
// anchor's and each use is counted again by the converter. Nodes live in YamlTree's arena.
struct YamlNode {
  enum class Kind { kNull, kScalar, kSequence, kMap };
  Kind kind = Kind::kNull;
  YAML::Mark mark;
  std::string tag;
  std::string scalar;
  std::vector<const YamlNode*> items;                              // kSequence
  std::vector<std::pair<const YamlNode*, const YamlNode*>> pairs;  // kMap, in document order
};

// Builds YamlNodes from yaml-cpp's parser events, one document at a time. Used instead of
// YAML::LoadAll, which never returns on some inputs: a ',' outside a flow collection (`,`,
// `[a], b`) is a token yaml-cpp's document parser does not consume, so it yields empty documents
// forever while LoadAll collects them (found by fuzzing; tests/bad_inputs resolve_yaml_stray_comma).
class YamlTree final : public YAML::EventHandler {
 public:
  /// The root of the document just handled, or nullptr when it produced no node.
  const YamlNode* TakeRoot() { return std::exchange(root_, nullptr); }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    YamlNode& node = New(YamlNode::Kind::kNull, mark, "", anchor);
    Attach(&node);
  }
  void OnAlias(const YAML::Mark&, YAML::anchor_t anchor) override {
    // The parser checks that the anchor exists before it reports an alias.
    Attach(anchor < anchors_.size() ? anchors_[anchor] : nullptr);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    YamlNode& node = New(YamlNode::Kind::kScalar, mark, tag, anchor);
    node.scalar = value;
    Attach(&node);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open_.push_back({&New(YamlNode::Kind::kSequence, mark, tag, anchor), nullptr});
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open_.push_back({&New(YamlNode::Kind::kMap, mark, tag, anchor), nullptr});
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Open {
    YamlNode* node;
    const YamlNode* pending_key;  // a map's key waiting for its value
  };

  YamlNode& New(YamlNode::Kind kind, const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor) {
    YamlNode& node = arena_.emplace_back();
    node.kind = kind;
    node.mark = mark;
    node.tag = tag;
    if (anchor != YAML::NullAnchor) {
      if (anchors_.size() <= anchor) anchors_.resize(anchor + 1, nullptr);
      anchors_[anchor] = &node;  // registered before its contents, as yaml-cpp does
    }
    return node;
  }

  void Attach(const YamlNode* node) {
    if (node == nullptr) return;
    if (open_.empty()) {
      if (root_ == nullptr) root_ = node;
      return;
    }
    Open& parent = open_.back();
    if (parent.node->kind == YamlNode::Kind::kSequence) {
      parent.node->items.push_back(node);
    } else if (parent.pending_key == nullptr) {
      parent.pending_key = node;
    } else {
      parent.node->pairs.emplace_back(parent.pending_key, node);
      parent.pending_key = nullptr;
    }
  }

  void Close() {
    if (open_.empty()) return;
    const YamlNode* node = open_.back().node;
    open_.pop_back();
    Attach(node);
  }

  std::deque<YamlNode> arena_;
  std::vector<YamlNode*> anchors_;
  std::vector<Open> open_;
  const YamlNode* root_ = nullptr;
};

class YamlConverter {
 public:
  YamlConverter(const std::string& file, const Limits& limits) : file_(file), limits_(limits) {}

  Status Convert(const YamlNode& node, std::string& pointer, int depth, Json* out) {
    if (++values_ > limits_.max_values) {
      return Error(node,
                   "invalid YAML: document expands to more than " + std::to_string(limits_.max_values) +
                       " values (through aliases?)",
                   {LimitNote("--max-values", limits_.max_values)});
    }
    // Counted before this value's text is copied, so at most one scalar (no longer than the input) is
    // held past the limit. A value costs its scalar's bytes and its path's (the JSON pointer its
    // position is recorded under, which holds its key): an anchor of 20 MB used 100 times is 2 GB
    // although it is 100 values, and a long key repeats in the path of every value below it.
    expanded_bytes_ += pointer.size() + (node.kind == YamlNode::Kind::kScalar ? node.scalar.size() : 0);
    if (expanded_bytes_ > limits_.max_input_bytes) {
      return Error(node,
                   "invalid YAML: document expands to more than " + std::to_string(limits_.max_input_bytes) +
                       " bytes (its scalars and their paths, each use of an alias counted again)",
                   {LimitNote("--max-input-bytes", limits_.max_input_bytes)});
    }
    if (node.mark.line >= 0) positions_[pointer] = Position{node.mark.line + 1, node.mark.column + 1};
    switch (node.kind) {
      case YamlNode::Kind::kScalar:
        return Scalar(node, out);
      case YamlNode::Kind::kSequence:
        return Sequence(node, pointer, depth, out);
      case YamlNode::Kind::kMap:
        return Mapping(node, pointer, depth, out);
      case YamlNode::Kind::kNull:
        *out = nullptr;
        return Status();
    }
    return Status();
  }

  PositionMap& positions() { return positions_; }
  std::vector<std::string>& duplicates() { return duplicates_; }
  std::map<std::string, Document::Position>& first_positions() { return first_positions_; }

  Status Error(const YAML::Mark& mark, std::string reason, std::vector<std::string> notes = {}) const {
    SourceLoc loc{file_, "", 0, 0};
    if (mark.line >= 0) {
      loc.line = mark.line + 1;
      loc.column = mark.column + 1;
    }
    return Status::BadInput(std::move(loc), std::move(reason), std::move(notes));
  }
  Status Error(const YamlNode& node, std::string reason, std::vector<std::string> notes = {}) const {
    return Error(node.mark, std::move(reason), std::move(notes));
  }

 private:
  Status Scalar(const YamlNode& node, Json* out) {
    const std::string& text = node.scalar;
    if (!IsValidUtf8(text)) return Error(node, "invalid YAML: invalid UTF-8 in scalar");
    const std::string& tag = node.tag;
    if (tag == "!" || tag == "tag:yaml.org,2002:str") {
      *out = text;
      return Status();
    }
    if (std::optional<std::string> error = ResolvePlainScalar(text, out)) {
      return Error(node, std::move(*error));
    }
    return Status();
  }

  Status EnterContainer(const YamlNode& node, int depth) const {
    if (depth + 1 > limits_.max_depth) {
      return Error(node, "invalid YAML: nesting deeper than " + std::to_string(limits_.max_depth) + " levels",
                   {LimitNote("--max-depth", limits_.max_depth)});
    }
    return Status();
  }

  Status Sequence(const YamlNode& node, std::string& pointer, int depth, Json* out) {
    EP_RETURN_IF_ERROR(EnterContainer(node, depth));
    *out = Json::array();
    Json::array_t& items = *out->get_ptr<Json::array_t*>();
    size_t index = 0;
    for (const YamlNode* item : node.items) {
      const size_t parent_size = pointer.size();
      AppendPointerIndex(pointer, index++);
      items.emplace_back();
      EP_RETURN_IF_ERROR(Convert(*item, pointer, depth + 1, &items.back()));
      pointer.resize(parent_size);
    }
    return Status();
  }

  Status Mapping(const YamlNode& node, std::string& pointer, int depth, Json* out) {
    EP_RETURN_IF_ERROR(EnterContainer(node, depth));
    *out = Json::object();
    KeyTracker keys;
    for (const auto& [key_node, value_node] : node.pairs) {
      std::string key;
      if (key_node->kind == YamlNode::Kind::kScalar) {
        key = key_node->scalar;
        if (!IsValidUtf8(key)) return Error(*key_node, "invalid YAML: invalid UTF-8 in scalar");
      } else if (key_node->kind == YamlNode::Kind::kNull) {
        key = "null";
      } else {
        return Error(*key_node, std::string("invalid YAML: a mapping key must be a scalar, not a ") +
                                    (key_node->kind == YamlNode::Kind::kMap ? "mapping" : "sequence"));
      }
      const size_t parent_size = pointer.size();
      AppendPointerKey(pointer, key);
      const std::optional<size_t> existing = keys.Note(key, pointer, &positions_, &duplicates_, &first_positions_);
      Json value;
      EP_RETURN_IF_ERROR(Convert(*value_node, pointer, depth + 1, &value));
      SetMember(out, existing, std::move(key), std::move(value));
      pointer.resize(parent_size);
    }
    return Status();
  }

  const std::string& file_;
  const Limits& limits_;
  size_t values_ = 0;
  size_t expanded_bytes_ = 0;
  PositionMap positions_;
  std::vector<std::string> duplicates_;
  std::map<std::string, Document::Position> first_positions_;  // of each duplicate key
};

}  // namespace

StatusOr<Document> ParseYamlDocument(std::string_view text, std::string file, const Limits& limits) {
  // More documents than this are not counted one by one ("found more than 100").
  constexpr size_t kMaxDocumentsCounted = 100;
  try {
    std::istringstream stream{std::string(text)};
    YAML::Parser parser(stream);
    YamlTree tree;
    std::vector<const YamlNode*> documents;
    YamlConverter converter(file, limits);
    size_t handled = 0;
    while (handled++ <= kMaxDocumentsCounted && parser.HandleNextDocument(tree)) {
      const YamlNode* root = tree.TakeRoot();
      if (root == nullptr) continue;
      // yaml-cpp does not consume a stray ',' outside a flow collection: it reports an empty
      // document at the same place again and again. Name the character instead of looping.
      if (!documents.empty() && root->kind == YamlNode::Kind::kNull &&
          documents.back()->kind == YamlNode::Kind::kNull && root->mark.pos == documents.back()->mark.pos) {
        const size_t pos = static_cast<size_t>(root->mark.pos);
        const std::string what = pos < text.size() ? "'" + std::string(1, text[pos]) + "'" : "token";
        return converter.Error(*root, "invalid YAML: unexpected " + what);
      }
      documents.push_back(root);
      if (documents.size() > kMaxDocumentsCounted) break;
    }
    if (documents.empty()) return Document(std::move(file), Json(nullptr));
    if (documents.size() > 1) {
      const std::string count = documents.size() > kMaxDocumentsCounted
                                    ? "more than " + std::to_string(kMaxDocumentsCounted)
                                    : std::to_string(documents.size());
      return converter.Error(*documents[1], "invalid YAML: expected a single document, found " + count);
    }
    Json root;
    std::string pointer;
    EP_RETURN_IF_ERROR(converter.Convert(*documents[0], pointer, 0, &root));
    return Document(std::move(file), std::move(root), std::move(converter.positions()),
                    std::move(converter.duplicates()), std::move(converter.first_positions()));
  } catch (const YAML::Exception& e) {
    SourceLoc loc{file, "", 0, 0};
    if (e.mark.line >= 0) {
      loc.line = e.mark.line + 1;
      loc.column = e.mark.column + 1;
    }
    return Status::BadInput(std::move(loc), "invalid YAML: " + e.msg);
  } catch (const std::exception& e) {
    return Status::BadInput(SourceLoc{file, "", 0, 0}, std::string("invalid YAML: ") + e.what());
  }
}

}  // namespace easyplan
