// The staleness test of flag spellings (issue 46): every `--flag` that the project's non-test sources
// spell, in a message, a hint or a comment, is either a flag the option table declares (its current
// spelling, or an old one it still accepts with a warning) or a flag of another program that a pinned
// vocabulary file lists (schemas/runtimes/*.yaml: Megatron-LM's command line). A renamed or removed
// flag therefore cannot live on in a message, and a Megatron flag the export writes cannot drift from
// the commit the vocabulary pins. Command lines themselves are only written by the table
// (api::CommandLine), so no source builds one from literal flags.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "api/command_table.h"
#include "core/yaml_parse.h"
#include "planner/runtime_vocabulary.h"
#include "tests/test_util.h"

namespace easyplan::api {
namespace {

namespace fs = std::filesystem;

struct Spelling {
  std::string flag;
  std::string where;  ///< "api/cost.cc:123"
};

// The text of a C++ file's string literals and comments, with their line numbers: where prose spells
// flags. Code (`--i`, a decrement) is skipped. Character literals and escapes are honoured; raw
// strings are read as plain strings, which is enough for the flags they hold.
std::vector<std::pair<int, std::string>> ProseOf(const std::string& text) {
  std::vector<std::pair<int, std::string>> out;
  int line = 1;
  std::string current;
  int current_line = 1;
  enum { kCode, kString, kChar, kLineComment, kBlockComment } state = kCode;
  auto flush = [&] {
    if (!current.empty()) out.emplace_back(current_line, current);
    current.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    switch (state) {
      case kCode:
        if (c == '"') {
          state = kString;
          current_line = line;
        } else if (c == '\'') {
          state = kChar;
        } else if (c == '/' && next == '/') {
          state = kLineComment;
          current_line = line;
          ++i;
        } else if (c == '/' && next == '*') {
          state = kBlockComment;
          current_line = line;
          ++i;
        }
        break;
      case kString:
        if (c == '\\') {
          current += c;
          current += next;
          ++i;
        } else if (c == '"' || c == '\n') {
          state = kCode;
          flush();
        } else {
          current += c;
        }
        break;
      case kChar:
        if (c == '\\') {
          ++i;
        } else if (c == '\'') {
          state = kCode;
        }
        break;
      case kLineComment:
        if (c == '\n') {
          state = kCode;
          flush();
        } else {
          current += c;
        }
        break;
      case kBlockComment:
        if (c == '*' && next == '/') {
          state = kCode;
          flush();
          ++i;
        } else if (c == '\n') {
          flush();
          current_line = line + 1;
        } else {
          current += c;
        }
        break;
    }
    if (c == '\n') ++line;
  }
  flush();
  return out;
}

std::vector<Spelling> SpelledFlags() {
  static const std::regex kFlag(R"((^|[^\w-])(--[a-z][a-z0-9-]*[a-z0-9]))");
  std::vector<Spelling> out;
  const fs::path root = testing::SourceDir();
  for (const char* dir : {"core", "schemas", "rules", "planner", "kernels", "step", "api", "cli"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const std::string name = entry.path().filename().string();
      const std::string ext = entry.path().extension().string();
      if (!entry.is_regular_file() || (ext != ".cc" && ext != ".h")) continue;
      if (name.find("_test") != std::string::npos) continue;  // tests spell flags to drive the CLI
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      const std::string relative = fs::relative(entry.path(), root).string();
      for (const auto& [line, prose] : ProseOf(text.str())) {
        for (auto it = std::sregex_iterator(prose.begin(), prose.end(), kFlag); it != std::sregex_iterator(); ++it) {
          out.push_back({(*it)[2].str(), relative + ":" + std::to_string(line)});
        }
      }
    }
  }
  return out;
}

// Every spelling the table gives a flag (CommandTableJson: each command's options, the Model's and the
// global ones, and the renamed), plus CLI11's own --help and --version (cli/app.cc).
std::set<std::string> TableFlags() {
  std::set<std::string> flags = {"--help", "--version"};
  const auto add = [&flags](const Json& option) {
    std::string flag = option["flag"].get<std::string>();  // "--mesh", or "-o, --output"
    if (const size_t space = flag.rfind(' '); space != std::string::npos) flag = flag.substr(space + 1);
    flags.insert(flag);
  };
  const Json table = CommandTableJson();
  for (const Json& command : table["commands"]) {
    for (const Json& option : command["options"]) add(option);
  }
  for (const char* pseudo : {"model", "global", "renamed"}) {
    for (const Json& option : table[pseudo]) add(option);
  }
  return flags;
}

std::set<std::string> VocabularyFlags() {
  std::set<std::string> flags;
  for (const auto& entry : fs::directory_iterator(fs::path(testing::SourceDir()) / "schemas" / "runtimes")) {
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    StatusOr<Document> doc = ParseYamlDocument(text.str(), entry.path().string());
    EXPECT_TRUE(doc.ok()) << doc.status().ToString();
    if (!doc.ok()) continue;
    StatusOr<planner::RuntimeVocabulary> vocabulary = planner::ParseRuntimeVocabulary(*doc);
    EXPECT_TRUE(vocabulary.ok()) << vocabulary.status().ToString();
    if (!vocabulary.ok()) continue;
    for (const auto& [list, names] : vocabulary->lists) {
      for (const std::string& name : names) {
        if (name.starts_with("--")) flags.insert(name);
      }
    }
  }
  return flags;
}

TEST(FlagSpellingTest, EveryFlagTheSourcesSpellIsDeclaredByTheTableOrAPinnedVocabulary) {
  const std::set<std::string> table = TableFlags();
  const std::set<std::string> vocabulary = VocabularyFlags();
  ASSERT_GT(table.size(), 60u);        // the table was read
  ASSERT_GT(vocabulary.size(), 500u);  // Megatron-LM's flags were read
  const std::vector<Spelling> spelled = SpelledFlags();
  ASSERT_GT(spelled.size(), 300u);  // the sources were read
  std::map<std::string, std::vector<std::string>> stale;
  for (const Spelling& s : spelled) {
    if (table.count(s.flag) == 0 && vocabulary.count(s.flag) == 0) stale[s.flag].push_back(s.where);
  }
  for (const auto& [flag, where] : stale) {
    ADD_FAILURE() << flag << " is spelled at " << where.front() << (where.size() > 1 ? " and elsewhere" : "")
                  << ", and neither the option table (api/option_table.cc) nor a pinned vocabulary "
                  << "(schemas/runtimes/*.yaml) declares it";
  }
}

TEST(FlagSpellingTest, ProseOfSkipsCodeAndReadsStringsAndComments) {
  const auto prose = ProseOf("int i = 3; --i; // see --mesh\nauto s = \"--batch \\\"x\\\"\"; char c = '\"';\n");
  ASSERT_EQ(prose.size(), 2u);
  EXPECT_EQ(prose[0].first, 1);
  EXPECT_EQ(prose[0].second, " see --mesh");
  EXPECT_EQ(prose[1].first, 2);
  EXPECT_EQ(prose[1].second, "--batch \\\"x\\\"");
}

}  // namespace
}  // namespace easyplan::api
