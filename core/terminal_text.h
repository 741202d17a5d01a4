#ifndef EASYPLAN_CORE_TERMINAL_TEXT_H_
#define EASYPLAN_CORE_TERMINAL_TEXT_H_

// Text on its way to a terminal. A config key, a --mesh value, a tensor name or a file name can hold
// any byte, and a terminal acts on some of them: ESC starts a control sequence (move the cursor,
// clear the screen, retitle the window, OSC 52 writes the clipboard), BEL rings, CR overwrites the
// line, and the C1 controls (U+0080..U+009F, CSI is U+009B) act like ESC sequences on many terminals.
// Every message easyplan prints to stderr goes through TerminalSafeBuf (cli/main.cc), and stdout too
// when it is a terminal (docs/RELIABILITY.md, "Output safety").

#include <streambuf>
#include <string>
#include <string_view>

namespace easyplan {

/// `text` with every byte a terminal would act on made visible: C0 controls except \n and \t (which
/// are the messages' own structure), and DEL, as \xNN (ESC is \x1b, NUL \x00); C1 controls as \u0080..
/// \u009f; each byte that is not part of well-formed UTF-8 as \xNN. Everything else, backslashes
/// included, is kept as it is.
std::string EscapeForTerminal(std::string_view text);

/// A stream buffer that writes what it is given to `target` through EscapeForTerminal. Text is held
/// until a newline, a flush (sync) or destruction, so a UTF-8 sequence written in two pieces is still
/// seen whole; a stream with std::unitbuf (main's stderr, so that every message is out before anything
/// else happens) flushes after each insertion instead, and a message is one insertion.
class TerminalSafeBuf final : public std::streambuf {
 public:
  explicit TerminalSafeBuf(std::streambuf* target) : target_(target) {}
  ~TerminalSafeBuf() override;
  TerminalSafeBuf(const TerminalSafeBuf&) = delete;
  TerminalSafeBuf& operator=(const TerminalSafeBuf&) = delete;

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  /// Writes the pending text up to and including its last newline (all of it when `all`).
  bool Emit(bool all);
  std::streambuf* target_;
  std::string pending_;
};

}  // namespace easyplan

#endif  // EASYPLAN_CORE_TERMINAL_TEXT_H_
