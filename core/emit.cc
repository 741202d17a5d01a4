#include "core/emit.h"

#include <cmath>
#include <cstdio>
#include <optional>
#include <string_view>

#include "core/ascii.h"
#include "core/human.h"
#include "core/json_pointer.h"

namespace easyplan {
namespace {

/// Widest line a flow sequence may produce.
constexpr size_t kMaxFlowColumns = 80;
// Longest key written as `key: value`; longer ones are written `? key` / `: value` (YAML limits
// implicit keys to 1024 characters).
constexpr size_t kMaxImplicitKeyBytes = 1000;

/// True if `text` reads back as the same string when written without quotes.
bool IsPlainSafe(const std::string& text) {
  if (text.empty()) return false;
  const auto is_letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!is_letter(text[0]) && text[0] != '_') return false;
  for (char c : text) {
    const bool allowed = is_letter(c) || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '/' || c == '-';
    if (!allowed) return false;
  }
  for (const char* reserved : {"null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE"}) {
    if (text == reserved) return false;
  }
  const std::string lowered = AsciiLowered(text);
  for (const char* yaml11_bool : {"y", "n", "yes", "no", "on", "off"}) {
    if (lowered == yaml11_bool) return false;
  }
  return true;
}

/// A JSON string literal that is also a valid YAML double-quoted scalar: besides what JSON
/// escapes, DEL, C1 controls, U+2028, U+2029 and U+FEFF are escaped, since YAML does not allow
/// them raw (or treats them as line breaks).
std::string Quoted(const std::string& text) {
  const std::string json = Json(text).dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
  std::string out;
  out.reserve(json.size());
  char escape[8];
  for (size_t i = 0; i < json.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(json[i]);
    const unsigned char next = i + 1 < json.size() ? static_cast<unsigned char>(json[i + 1]) : 0;
    if (c == 0x7F) {
      out += "\\u007f";
    } else if (c == 0xC2 && next >= 0x80 && next <= 0x9F) {
      std::snprintf(escape, sizeof(escape), "\\u%04x", next);
      out += escape;
      ++i;
    } else if (c == 0xE2 && next == 0x80 && i + 2 < json.size() && (json[i + 2] == '\xA8' || json[i + 2] == '\xA9')) {
      out += json[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else if (c == 0xEF && next == 0xBB && i + 2 < json.size() && json[i + 2] == '\xBF') {
      out += "\\ufeff";
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string StringText(const std::string& text) { return IsPlainSafe(text) ? text : Quoted(text); }

/// A NaN or an infinity in an output document and its JSON pointer (relative to the document).
struct NonFinite {
  std::string pointer;
  double value = 0;
};

/// The first NaN or infinity of `value`, or nullopt when it has none. The pointer is built on the way
/// back up, so a document without one costs a walk and no strings.
std::optional<NonFinite> FirstNonFinite(const Json& value) {
  if (value.is_number_float()) {
    const double number = value.get<double>();
    return std::isfinite(number) ? std::nullopt : std::optional<NonFinite>(NonFinite{"", number});
  }
  std::optional<NonFinite> found;
  if (value.is_object()) {
    for (const auto& [key, member] : value.items()) {
      if ((found = FirstNonFinite(member))) {
        found->pointer = PointerToMember("", key) + found->pointer;
        return found;
      }
    }
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) {
      if ((found = FirstNonFinite(value[i]))) {
        found->pointer = PointerToElement("", i) + found->pointer;
        return found;
      }
    }
  }
  return std::nullopt;
}

std::string FloatText(double value) {
  std::string text = Json(value).dump();
  const size_t exponent = text.find_first_of("eE");
  if (exponent != std::string::npos && text.find('.') == std::string::npos) {
    text.insert(exponent, ".0");
  }
  return text;
}

/// A scalar, or an empty object/array, on one line.
std::string InlineText(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return value.dump();
    case Json::value_t::number_float:
      return FloatText(value.get<double>());
    case Json::value_t::string:
      return StringText(value.get_ref<const std::string&>());
    case Json::value_t::object:
      return "{}";
    case Json::value_t::array:
      return "[]";
    default:
      return Quoted(value.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
}

bool IsInline(const Json& value) { return !value.is_structured() || value.empty(); }

/// "[a, b, c]" if every element is a scalar, else nullopt. REQUIRES: value is an array.
std::optional<std::string> FlowSequence(const Json& value) {
  std::string out = "[";
  for (const Json& item : value) {
    if (item.is_structured()) return std::nullopt;
    if (out.size() > 1) out += ", ";
    out += InlineText(item);
    if (out.size() > kMaxFlowColumns) return std::nullopt;
  }
  return out + "]";
}

/// The text of `value` if it goes on the same line as a head of `head_width` columns ("key:" or
/// "-", indentation included): scalars, empty containers, and flow sequences that fit.
std::optional<std::string> OnOneLine(const Json& value, size_t head_width) {
  if (IsInline(value)) return InlineText(value);
  if (!value.is_array()) return std::nullopt;
  std::optional<std::string> flow = FlowSequence(value);
  if (!flow || head_width + 1 + flow->size() > kMaxFlowColumns) return std::nullopt;
  return flow;
}

/// Writes a non-empty object or block sequence, every line indented by `indent`.
void EmitBlock(const Json& value, size_t indent, std::string* out) {
  const std::string pad(indent, ' ');
  if (value.is_object()) {
    for (const auto& [key, member] : value.items()) {
      const std::string key_text = StringText(key);
      if (key_text.size() > kMaxImplicitKeyBytes) {
        // YAML allows at most 1024 characters in an implicit `key:` (yaml-cpp refuses longer ones:
        // "illegal map value"), so a long key is written explicitly: `? key` then `: value`.
        *out += pad + "? " + key_text + "\n";
        if (std::optional<std::string> text = OnOneLine(member, indent + 1)) {
          *out += pad + ": " + *text + "\n";
        } else {
          *out += pad + ":\n";
          EmitBlock(member, indent + 2, out);
        }
        continue;
      }
      const std::string head = pad + key_text + ":";
      if (std::optional<std::string> text = OnOneLine(member, head.size())) {
        *out += head + " " + *text + "\n";
      } else {
        *out += head + "\n";
        EmitBlock(member, indent + 2, out);
      }
    }
    return;
  }
  for (const Json& item : value) {
    if (std::optional<std::string> text = OnOneLine(item, indent + 1)) {
      *out += pad + "- " + *text + "\n";
      continue;
    }
    // A nested block starts on the dash line: write it two deeper, then put "- " over the
    // indentation of its first line.
    std::string nested;
    EmitBlock(item, indent + 2, &nested);
    nested.replace(0, indent + 2, pad + "- ");
    *out += nested;
  }
}

}  // namespace

void RequireFinite(const Json& value) {
  if (std::optional<NonFinite> found = FirstNonFinite(value)) {
    FiniteFigure(found->value, found->pointer.empty() ? "the output" : "the output's " + found->pointer);
  }
}

std::string EmitJson(const Json& value) {
  RequireFinite(value);
  return value.dump(2, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace) + "\n";
}

std::string EmitYaml(const Json& value) {
  RequireFinite(value);
  if (IsInline(value)) return InlineText(value) + "\n";
  if (value.is_array()) {
    const std::optional<std::string> flow = FlowSequence(value);
    if (flow && flow->size() <= kMaxFlowColumns) return *flow + "\n";
  }
  std::string out;
  EmitBlock(value, 0, &out);
  return out;
}

}  // namespace easyplan
