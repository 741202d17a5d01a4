#include "core/terminal_text.h"

#include <cstdio>

#include "core/utf8.h"

namespace easyplan {
namespace {

void AppendHexByte(std::string& out, unsigned char byte) {
  char escaped[8];
  std::snprintf(escaped, sizeof(escaped), "\\x%02x", byte);
  out += escaped;
}

}  // namespace

std::string EscapeForTerminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      if ((byte < 0x20 && byte != '\n' && byte != '\t') || byte == 0x7f) {
        AppendHexByte(out, byte);
      } else {
        out += static_cast<char>(byte);
      }
      ++i;
      continue;
    }
    const size_t length = Utf8SequenceLength(text, i);
    if (length == 0) {
      AppendHexByte(out, byte);
      ++i;
      continue;
    }
    // U+0080..U+009F are encoded as C2 80..C2 9F.
    const unsigned char second = static_cast<unsigned char>(text[i + 1]);
    if (byte == 0xC2 && second < 0xA0) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", second);
      out += escaped;
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

TerminalSafeBuf::~TerminalSafeBuf() { Emit(/*all=*/true); }

TerminalSafeBuf::int_type TerminalSafeBuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  pending_ += traits_type::to_char_type(c);
  if (traits_type::to_char_type(c) == '\n' && !Emit(/*all=*/false)) return traits_type::eof();
  return c;
}

std::streamsize TerminalSafeBuf::xsputn(const char* s, std::streamsize n) {
  pending_.append(s, static_cast<size_t>(n));
  if (std::string_view(s, static_cast<size_t>(n)).find('\n') != std::string_view::npos && !Emit(/*all=*/false)) {
    return 0;
  }
  return n;
}

int TerminalSafeBuf::sync() {
  if (!Emit(/*all=*/true)) return -1;
  return target_->pubsync();
}

bool TerminalSafeBuf::Emit(bool all) {
  const size_t end = all ? pending_.size() : pending_.rfind('\n') + 1;  // npos + 1 == 0: nothing
  if (end == 0) return true;
  const std::string escaped = EscapeForTerminal(std::string_view(pending_).substr(0, end));
  pending_.erase(0, end);
  const auto size = static_cast<std::streamsize>(escaped.size());
  return target_->sputn(escaped.data(), size) == size;
}

}  // namespace easyplan
