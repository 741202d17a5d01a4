#include "core/json_parse.h"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "core/json_pointer.h"
#include "core/key_tracker.h"
#include "core/number_literal.h"
#include "core/utf8.h"

namespace easyplan {
namespace {

using Position = Document::Position;
using PositionMap = std::map<std::string, Position>;

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

/// A validating recursive-descent parser that records positions and duplicate keys.

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
  std::map<std::string, Document::Position>& first_positions() { return first_positions_; }

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
    if (c == '-' || IsAsciiDigit(c)) return Number(out);
    if (IsAsciiAlpha(c)) return Literal(out);
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
      AppendPointerKey(pointer, key);
      const std::optional<size_t> existing = keys.Note(key, pointer, &positions_, &duplicates_, &first_positions_);
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
      AppendPointerIndex(pointer, index);
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

  static bool IsNumberish(char c) {
    return IsAsciiDigit(c) || IsAsciiAlpha(c) || c == '.' || c == '+' || c == '-' || c == '_';
  }

  Status Number(Json* out) {
    const size_t start = pos_;
    size_t p = pos_;
    const auto digits = [&] {
      const size_t first = p;
      while (p < text_.size() && IsAsciiDigit(text_[p])) ++p;
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
      return Syntax(start, "invalid number '" + ShortenLiteral(text_.substr(start, end - start)) + "'");
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
    while (end < text_.size() && (IsAsciiAlpha(text_[end]) || IsAsciiDigit(text_[end]) || text_[end] == '_')) {
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
    return Syntax(start, "invalid literal '" + ShortenLiteral(word) + "'" + hint);
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
  std::map<std::string, Document::Position> first_positions_;  // of each duplicate key
};

}  // namespace

StatusOr<Document> ParseJsonDocument(std::string_view text, std::string file, const Limits& limits) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  JsonScanner scanner(text, file, limits);
  Json root;
  EP_RETURN_IF_ERROR(scanner.Run(&root));
  return Document(std::move(file), std::move(root), std::move(scanner.positions()), std::move(scanner.duplicates()),
                  std::move(scanner.first_positions()));
}

std::optional<Json> ParseJsonValue(std::string_view text) {
  Json value = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return std::nullopt;
  return value;
}

}  // namespace easyplan
