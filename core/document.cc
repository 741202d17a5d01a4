#include "core/document.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <deque>
#include <exception>
#include <limits>
#include <optional>
#include <sstream>
#include <utility>

#include "core/utf8.h"

namespace easyplan {
namespace {

using Position = Document::Position;
using PositionMap = std::map<std::string, Position>;

/// Literals longer than this are shortened in messages.
constexpr size_t kMaxLiteralInMessage = 40;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string Shorten(std::string_view text) {
  if (text.size() <= kMaxLiteralInMessage) return std::string(text);
  return std::string(text.substr(0, kMaxLiteralInMessage - 3)) + "...";
}

void AppendUtf8(uint32_t code_point, std::string* out) {
  if (code_point < 0x80) {
    out->push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

/// For a decimal literal ("-12.5e3"), whether its magnitude is at least 1 (so that a from_chars
/// range error means overflow rather than underflow). REQUIRES: some mantissa digit is nonzero.
bool MagnitudeAtLeastOne(std::string_view literal) {
  long long digits_before_point = 0;
  long long first_nonzero = -1;  // index among mantissa digits
  long long digit_index = 0;
  bool seen_point = false;
  size_t i = 0;
  for (; i < literal.size() && literal[i] != 'e' && literal[i] != 'E'; ++i) {
    const char c = literal[i];
    if (c == '.') {
      seen_point = true;
    } else if (IsDigit(c)) {
      if (first_nonzero < 0 && c != '0') first_nonzero = digit_index;
      if (!seen_point) ++digits_before_point;
      ++digit_index;
    }
  }
  long long written_exponent = 0;
  if (i < literal.size()) {
    bool negative = false;
    for (++i; i < literal.size(); ++i) {
      if (literal[i] == '-') negative = true;
      if (IsDigit(literal[i]) && written_exponent < 1000000000) {
        written_exponent = written_exponent * 10 + (literal[i] - '0');
      }
    }
    if (negative) written_exponent = -written_exponent;
  }
  // The power of ten of the leading nonzero digit.
  const long long exponent = digits_before_point - first_nonzero - 1 + written_exponent;
  return exponent >= 0;
}

/// Parses a decimal float literal in JSON/YAML syntax (a leading '+' is allowed). nullopt when it
/// overflows a double; underflow gives a (signed) zero or subnormal, as strtod does.
/// REQUIRES: `literal` is a well-formed literal (checked by the caller's grammar).
std::optional<double> ParseDecimalFloat(std::string_view literal) {
  std::string_view digits = literal;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  double value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error == std::errc::result_out_of_range) {
    if (MagnitudeAtLeastOne(digits)) return std::nullopt;
    return digits.front() == '-' ? -0.0 : 0.0;
  }
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

std::string IntegerRangeMessage(std::string_view literal) {
  return "integer " + Shorten(literal) + " does not fit in 64 bits";
}

std::string FloatRangeMessage(std::string_view literal) {
  return "float " + Shorten(literal) + " does not fit in 64 bits";
}

/// Duplicate-key bookkeeping for one object: call Note() before parsing each member's value.
class KeyTracker {
 public:
  /// Records that `key` (whose member is at `pointer`) was seen; returns the index of its earlier
  /// member, or nullopt for a new key (which will be member number size()). A repeated key replaces
  /// the earlier value in place (Python's json keeps the first position and the last value), so the
  /// positions recorded under it are dropped and the pointer is reported once.
  std::optional<size_t> Note(const std::string& key, const std::string& pointer, PositionMap* positions,
                             std::vector<std::string>* duplicates) {
    const auto [it, inserted] = members_.try_emplace(key, Member{members_.size(), 0});
    if (inserted) return std::nullopt;
    if (++it->second.repeats == 1) duplicates->push_back(pointer);
    positions->erase(pointer);
    // Every pointer below `pointer` sorts in [pointer + "/", pointer + "0") since '0' == '/' + 1.
    positions->erase(positions->lower_bound(pointer + "/"), positions->lower_bound(pointer + "0"));
    return it->second.index;
  }

 private:
  struct Member {
    size_t index;
    int repeats;
  };
  std::map<std::string, Member> members_;
};

/// Sets member `key` of the object `object` to `value` in O(1) (nlohmann's ordered_map looks keys up
/// linearly, which makes building an object of n keys O(n^2)): `existing` is what KeyTracker::Note
/// returned for the key.
void SetMember(Json* object, std::optional<size_t> existing, std::string key, Json value) {
  if (existing) {
    Json::object_t::Container& members = *object->get_ptr<Json::object_t*>();
    members[*existing].second = std::move(value);
  } else {
    AppendMember(*object, std::move(key), std::move(value));
  }
}

// -----------------------------------------------------------------------------------------------
// JSON: a validating recursive-descent parser that records positions and duplicate keys.

class JsonScanner {
 public:
  JsonScanner(std::string_view text, const std::string& file, const Limits& limits)
      : text_(text), file_(file), limits_(limits) {}

  /// Parses the whole text into `root`; on success positions() and duplicates() describe it.
  Status Run(Json* root) {
    SkipWhitespace();
    if (AtEnd()) return Syntax(pos_, "empty document");
    std::string pointer;
    EP_RETURN_IF_ERROR(Value(pointer, 0, root));
    SkipWhitespace();
    if (!AtEnd()) {
      return Syntax(pos_, "unexpected " + Describe(pos_) + " after the end of the document");
    }
    return Status();
  }

  PositionMap& positions() { return positions_; }
  std::vector<std::string>& duplicates() { return duplicates_; }

  /// The position of a byte offset, counted from the start of the text.
  Position PositionOf(size_t offset) const {
    Position position{1, 1};
    for (size_t i = 0; i < offset && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++position.line;
        position.column = 1;
      } else {
        ++position.column;
      }
    }
    return position;
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }

  void SkipWhitespace() {
    for (; !AtEnd(); ++pos_) {
      const char c = text_[pos_];
      if (c == '\n') {
        ++line_;
        line_start_ = pos_ + 1;
      } else if (c != ' ' && c != '\t' && c != '\r') {
        break;
      }
    }
  }

  Status Syntax(size_t offset, const std::string& reason) const { return Error(offset, "invalid JSON: " + reason); }

  Status Error(size_t offset, std::string message, std::vector<std::string> notes = {}) const {
    const Position position = PositionOf(offset);
    return Status::BadInput(SourceLoc{file_, "", position.line, position.column}, std::move(message), std::move(notes));
  }

  /// "'}'", "byte 0xEF" or "end of input", for "unexpected ..." messages.
  std::string Describe(size_t offset) const {
    if (offset >= text_.size()) return "end of input";
    const char c = text_[offset];
    if (c > ' ' && c < 0x7F) return std::string("'") + c + "'";
    char hex[16];
    std::snprintf(hex, sizeof(hex), "byte 0x%02X", static_cast<unsigned char>(c));
    return hex;
  }

  Status Value(std::string& pointer, int depth, Json* out) {
    SkipWhitespace();
    if (AtEnd()) return Syntax(pos_, "unexpected end of input");
    if (++values_ > limits_.max_values) {
      return Error(pos_, "invalid JSON: document has more than " + std::to_string(limits_.max_values) + " values",
                   {LimitNote("--max-values", limits_.max_values)});
    }
    // Values start after whitespace on the current line, so the cached line is exact here.
    positions_[pointer] = Position{line_, static_cast<int>(pos_ - line_start_ + 1)};
    const char c = text_[pos_];
    if (c == '{') return Object(pointer, depth, out);
    if (c == '[') return Array(pointer, depth, out);
    if (c == '"') {
      std::string decoded;
      EP_RETURN_IF_ERROR(String(&decoded));
      *out = std::move(decoded);
      return Status();
    }
    if (c == '-' || IsDigit(c)) return Number(out);
    if (IsAlpha(c)) return Literal(out);
    if (c == '\'') return Syntax(pos_, "unexpected ''' (JSON strings use double quotes)");
    if (c == '/') return Syntax(pos_, "unexpected '/' (JSON has no comments)");
    return Syntax(pos_, "unexpected " + Describe(pos_));
  }

  Status EnterContainer(int depth) const {
    if (depth + 1 > limits_.max_depth) {
      return Error(pos_, "invalid JSON: nesting deeper than " + std::to_string(limits_.max_depth) + " levels",
                   {LimitNote("--max-depth", limits_.max_depth)});
    }
    return Status();
  }

  Status Object(std::string& pointer, int depth, Json* out) {
    EP_RETURN_IF_ERROR(EnterContainer(depth));
    *out = Json::object();
    ++pos_;  // '{'
    SkipWhitespace();
    if (!AtEnd() && text_[pos_] == '}') {
      ++pos_;
      return Status();
    }
    KeyTracker keys;
    while (true) {
      SkipWhitespace();
      if (AtEnd()) return Syntax(pos_, "unexpected end of input");
      if (text_[pos_] == '}') return Syntax(pos_, "trailing comma before '}'");
      if (text_[pos_] != '"') {
        return Syntax(pos_, "expected a double-quoted object key, found " + Describe(pos_));
      }
      std::string key;
      EP_RETURN_IF_ERROR(String(&key));
      SkipWhitespace();
      if (AtEnd()) return Syntax(pos_, "unexpected end of input");
      if (text_[pos_] != ':') return Syntax(pos_, "expected ':' after an object key");
      ++pos_;
      const size_t parent_size = pointer.size();
      pointer += '/';
      pointer += PointerToken(key);
      const std::optional<size_t> existing = keys.Note(key, pointer, &positions_, &duplicates_);
      Json value;
      EP_RETURN_IF_ERROR(Value(pointer, depth + 1, &value));
      SetMember(out, existing, std::move(key), std::move(value));
      pointer.resize(parent_size);
      SkipWhitespace();
      if (AtEnd()) return Syntax(pos_, "unexpected end of input");
      if (text_[pos_] == '}') {
        ++pos_;
        return Status();
      }
      if (text_[pos_] != ',') return Syntax(pos_, "expected ',' or '}' after an object member");
      ++pos_;
    }
  }

  Status Array(std::string& pointer, int depth, Json* out) {
    EP_RETURN_IF_ERROR(EnterContainer(depth));
    *out = Json::array();
    Json::array_t& items = *out->get_ptr<Json::array_t*>();
    ++pos_;  // '['
    SkipWhitespace();
    if (!AtEnd() && text_[pos_] == ']') {
      ++pos_;
      return Status();
    }
    for (size_t index = 0;; ++index) {
      SkipWhitespace();
      if (!AtEnd() && text_[pos_] == ']') return Syntax(pos_, "trailing comma before ']'");
      const size_t parent_size = pointer.size();
      pointer += '/';
      pointer += std::to_string(index);
      items.emplace_back();
      EP_RETURN_IF_ERROR(Value(pointer, depth + 1, &items.back()));
      pointer.resize(parent_size);
      SkipWhitespace();
      if (AtEnd()) return Syntax(pos_, "unexpected end of input");
      if (text_[pos_] == ']') {
        ++pos_;
        return Status();
      }
      if (text_[pos_] != ',') return Syntax(pos_, "expected ',' or ']' after an array element");
      ++pos_;
    }
  }

  /// Reads four hex digits at `offset`, or nullopt.
  std::optional<uint32_t> Hex4(size_t offset) const {
    if (offset + 4 > text_.size()) return std::nullopt;
    uint32_t value = 0;
    const char* begin = text_.data() + offset;
    const auto [end, error] = std::from_chars(begin, begin + 4, value, 16);
    if (error != std::errc() || end != begin + 4) return std::nullopt;
    return value;
  }

  /// Scans a string at pos_ (on its opening quote), appending its decoded value to `decoded`.
  Status String(std::string* decoded) {
    const size_t open = pos_++;
    while (true) {
      if (AtEnd()) return Syntax(open, "unterminated string");
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return Status();
      }
      if (c == '\\') {
        EP_RETURN_IF_ERROR(Escape(open, decoded));
      } else if (c == '\n') {
        return Syntax(pos_, "unescaped newline in string (missing closing quote?)");
      } else if (c < 0x20) {
        char message[64];
        std::snprintf(message, sizeof(message), "unescaped control character 0x%02X in string", c);
        return Syntax(pos_, message);
      } else {
        const size_t length = Utf8SequenceLength(text_, pos_);
        if (length == 0) return Syntax(pos_, "invalid UTF-8 in string");
        if (decoded != nullptr) decoded->append(text_.substr(pos_, length));
        pos_ += length;
      }
    }
  }

  /// Decodes the escape sequence at pos_ (on the backslash) of the string opened at `open`.
  Status Escape(size_t open, std::string* decoded) {
    if (pos_ + 1 >= text_.size()) return Syntax(open, "unterminated string");
    const char kind = text_[pos_ + 1];
    // The one-character escapes and what they stand for.
    constexpr std::string_view kEscaped = "\"\\/bfnrt";
    constexpr std::string_view kMeaning = "\"\\/\b\f\n\r\t";
    if (const size_t simple = kEscaped.find(kind); simple != std::string_view::npos) {
      if (decoded != nullptr) decoded->push_back(kMeaning[simple]);
      pos_ += 2;
      return Status();
    }
    if (kind != 'u') {
      if (kind > ' ' && kind < 0x7F) return Syntax(pos_, std::string("invalid escape '\\") + kind + "'");
      return Syntax(pos_, "invalid escape");
    }
    const std::optional<uint32_t> unit = Hex4(pos_ + 2);
    if (!unit) return Syntax(pos_, "invalid \\u escape (expected four hex digits)");
    uint32_t code_point = *unit;
    size_t length = 6;
    if (code_point >= 0xDC00 && code_point <= 0xDFFF) {
      return Syntax(pos_, "unpaired surrogate in \\u escape");
    }
    if (code_point >= 0xD800 && code_point <= 0xDBFF) {
      const bool has_next = pos_ + 7 < text_.size() && text_[pos_ + 6] == '\\' && text_[pos_ + 7] == 'u';
      const std::optional<uint32_t> low = has_next ? Hex4(pos_ + 8) : std::nullopt;
      if (!low || *low < 0xDC00 || *low > 0xDFFF) {
        return Syntax(pos_, "unpaired surrogate in \\u escape");
      }
      code_point = 0x10000 + ((code_point - 0xD800) << 10) + (*low - 0xDC00);
      length = 12;
    }
    if (decoded != nullptr) AppendUtf8(code_point, decoded);
    pos_ += length;
    return Status();
  }

  static bool IsNumberish(char c) { return IsDigit(c) || IsAlpha(c) || c == '.' || c == '+' || c == '-' || c == '_'; }

  Status Number(Json* out) {
    const size_t start = pos_;
    size_t p = pos_;
    const auto digits = [&] {
      const size_t first = p;
      while (p < text_.size() && IsDigit(text_[p])) ++p;
      return p > first;
    };
    bool valid = true;
    bool is_integer = true;
    if (text_[p] == '-') ++p;
    if (p < text_.size() && text_[p] == '0') {
      ++p;
    } else {
      valid = digits();
    }
    if (valid && p < text_.size() && text_[p] == '.') {
      ++p;
      is_integer = false;
      valid = digits();
    }
    if (valid && p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
      ++p;
      is_integer = false;
      if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
      valid = digits();
    }
    if (!valid || (p < text_.size() && IsNumberish(text_[p]))) {
      size_t end = start + 1;
      while (end < text_.size() && IsNumberish(text_[end])) ++end;
      return Syntax(start, "invalid number '" + Shorten(text_.substr(start, end - start)) + "'");
    }
    const std::string_view literal = text_.substr(start, p - start);
    if (is_integer) {
      int64_t value = 0;
      const auto result = std::from_chars(literal.data(), literal.data() + literal.size(), value);
      if (result.ec != std::errc()) return Error(start, IntegerRangeMessage(literal));
      *out = value;
    } else {
      const std::optional<double> value = ParseDecimalFloat(literal);
      if (!value) return Error(start, FloatRangeMessage(literal));
      *out = *value;
    }
    pos_ = p;
    return Status();
  }

  Status Literal(Json* out) {
    const size_t start = pos_;
    size_t end = pos_;
    while (end < text_.size() && (IsAlpha(text_[end]) || IsDigit(text_[end]) || text_[end] == '_')) {
      ++end;
    }
    const std::string_view word = text_.substr(start, end - start);
    if (word == "true" || word == "false" || word == "null") {
      if (word == "null") {
        *out = nullptr;
      } else {
        *out = word == "true";
      }
      pos_ = end;
      return Status();
    }
    std::string hint;
    if (word == "True" || word == "TRUE") hint = " (JSON spells it true)";
    if (word == "False" || word == "FALSE") hint = " (JSON spells it false)";
    if (word == "None" || word == "Null" || word == "NULL" || word == "nil") {
      hint = " (JSON spells it null)";
    }
    return Syntax(start, "invalid literal '" + Shorten(word) + "'" + hint);
  }

  std::string_view text_;
  const std::string& file_;
  const Limits& limits_;
  size_t values_ = 0;
  size_t pos_ = 0;
  int line_ = 1;           // line of pos_ after SkipWhitespace
  size_t line_start_ = 0;  // offset of the first byte of line_
  PositionMap positions_;
  std::vector<std::string> duplicates_;
};

// -----------------------------------------------------------------------------------------------
// YAML: yaml-cpp nodes -> Json with core-schema resolution.

/// Matches [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? (YAML 1.2 core float).
bool IsYamlDecimalFloat(std::string_view s) {
  size_t p = 0;
  const auto digits = [&] {
    const size_t first = p;
    while (p < s.size() && IsDigit(s[p])) ++p;
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
  if (AllOf(unsigned_part, IsDigit)) return parse_int(s[0] == '+' ? view.substr(1) : view, 10);
  const auto is_hex = [](char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
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
      pointer += '/';
      pointer += std::to_string(index++);
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
      pointer += '/';
      pointer += PointerToken(key);
      const std::optional<size_t> existing = keys.Note(key, pointer, &positions_, &duplicates_);
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
  PositionMap positions_;
  std::vector<std::string> duplicates_;
};

}  // namespace

Document::Document(std::string file, Json root, std::map<std::string, Position> positions,
                   std::vector<std::string> duplicate_keys)
    : file_(std::move(file)),
      root_(std::move(root)),
      positions_(std::move(positions)),
      duplicate_keys_(std::move(duplicate_keys)) {}

SourceLoc Document::Locate(std::string_view pointer) const {
  SourceLoc loc{file_, std::string(pointer), 0, 0};
  std::string_view probe = pointer;
  while (true) {
    const auto it = positions_.find(std::string(probe));
    if (it != positions_.end()) {
      loc.line = it->second.line;
      loc.column = it->second.column;
      return loc;
    }
    if (probe.empty()) return loc;
    const size_t slash = probe.rfind('/');
    probe = slash == std::string_view::npos ? std::string_view() : probe.substr(0, slash);
  }
}

std::string PointerToken(std::string_view key) {
  std::string token;
  token.reserve(key.size());
  for (char c : key) {
    if (c == '~') {
      token += "~0";
    } else if (c == '/') {
      token += "~1";
    } else {
      token += c;
    }
  }
  return token;
}

StatusOr<Document> ParseJsonDocument(std::string_view text, std::string file, const Limits& limits) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  JsonScanner scanner(text, file, limits);
  Json root;
  EP_RETURN_IF_ERROR(scanner.Run(&root));
  return Document(std::move(file), std::move(root), std::move(scanner.positions()), std::move(scanner.duplicates()));
}

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
                    std::move(converter.duplicates()));
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
