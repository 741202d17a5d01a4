#include "core/terminal_text.h"

#include <gtest/gtest.h>

#include <ostream>
#include <sstream>
#include <string>

namespace easyplan {
namespace {

using namespace std::string_literals;

TEST(EscapeForTerminalTest, ControlCharactersBecomeVisibleEscapes) {
  EXPECT_EQ(EscapeForTerminal("key \x1b[2Jx"), "key \\x1b[2Jx");             // ESC: clear the screen
  EXPECT_EQ(EscapeForTerminal("dp=2\a"), "dp=2\\x07");                       // BEL
  EXPECT_EQ(EscapeForTerminal("a\0b"s), "a\\x00b");                          // NUL
  EXPECT_EQ(EscapeForTerminal("a\rb\x7f"), "a\\x0db\\x7f");                  // CR overwrites the line; DEL
  EXPECT_EQ(EscapeForTerminal("\x1b]52;c;aGk=\a"), "\\x1b]52;c;aGk=\\x07");  // OSC 52: the clipboard
}

TEST(EscapeForTerminalTest, NewlinesTabsAndTextStay) {
  EXPECT_EQ(EscapeForTerminal("error: x\n  note:\ty\n"), "error: x\n  note:\ty\n");
  EXPECT_EQ(EscapeForTerminal("caf\xC3\xA9 \xE6\xBC\xA2 \xF0\x9F\x98\x80 a\\x1b"),
            "caf\xC3\xA9 \xE6\xBC\xA2 \xF0\x9F\x98\x80 a\\x1b");
  EXPECT_EQ(EscapeForTerminal("\xC2\xA0"), "\xC2\xA0");  // U+00A0, the first code point past C1
}

TEST(EscapeForTerminalTest, C1ControlsAndInvalidUtf8AreEscaped) {
  EXPECT_EQ(EscapeForTerminal("a\xC2\x9B"
                              "2Jb"),
            "a\\u009b2Jb");  // CSI
  EXPECT_EQ(EscapeForTerminal("\xC2\x80"), "\\u0080");
  EXPECT_EQ(EscapeForTerminal("name\xff\xfe.json"), "name\\xff\\xfe.json");
  EXPECT_EQ(EscapeForTerminal("\x9b"
                              "2J"),
            "\\x9b2J");  // a bare C1 byte is not UTF-8
  EXPECT_EQ(EscapeForTerminal("cut \xE6\xBC"), "cut \\xe6\\xbc");
}

TEST(TerminalSafeBufTest, EscapesWhatPassesThroughAndKeepsSplitCharactersWhole) {
  std::ostringstream target;
  {
    TerminalSafeBuf buf(target.rdbuf());
    std::ostream err(&buf);
    err << "easyplan: error: key 'a\x1b"
        << "b' \xE6";  // the character is split between two writes
    err << "\xBC\xA2\n";
    EXPECT_EQ(target.str(), "easyplan: error: key 'a\\x1bb' \xE6\xBC\xA2\n");
    err << "tail\a";
  }  // destruction passes on what is left
  EXPECT_EQ(target.str(), "easyplan: error: key 'a\\x1bb' \xE6\xBC\xA2\ntail\\x07");
}

TEST(TerminalSafeBufTest, FlushPassesOnPendingText) {
  std::ostringstream target;
  TerminalSafeBuf buf(target.rdbuf());
  std::ostream err(&buf);
  err << "no newline\x07" << std::flush;
  EXPECT_EQ(target.str(), "no newline\\x07");
}

}  // namespace
}  // namespace easyplan
