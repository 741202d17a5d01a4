// Runs each golden case: tests/golden/<command>/<case>.args holds one argument per line ("@TMP@" is a
// fresh temporary directory); optional <case>.stdin is fed to the program. Expected results sit beside:
// <case>.stdout, <case>.stderr, <case>.exit, and <case>.files/<name> for files written under @TMP@.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace easyplan {
namespace {

namespace fs = std::filesystem;

const fs::path kGoldenDir = fs::path(EASYPLAN_SOURCE_DIR) / "tests" / "golden";

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void Spit(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string ShellQuote(const std::string& arg) { return "'" + ReplaceAll(arg, "'", "'\\''") + "'"; }

std::vector<std::string> ListCases() {
  std::vector<std::string> cases;
  if (!fs::exists(kGoldenDir)) return cases;
  for (const auto& entry : fs::recursive_directory_iterator(kGoldenDir)) {
    if (entry.path().extension() == ".args") {
      cases.push_back(fs::relative(entry.path(), kGoldenDir).replace_extension().string());
    }
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, MatchesRecordedOutput) {
  const fs::path base = kGoldenDir / GetParam();
  const bool update = std::getenv("EASYPLAN_UPDATE_GOLDEN") != nullptr;
  fs::path tmp = fs::temp_directory_path() /
                 ("easyplan-golden-" + std::to_string(::getpid()) + "-" + ReplaceAll(GetParam(), "/", "_"));
  fs::remove_all(tmp);
  fs::create_directories(tmp);

  std::string command = "cd " + ShellQuote(EASYPLAN_SOURCE_DIR) + " && " + ShellQuote(EASYPLAN_BINARY);
  std::istringstream args(Slurp(base.string() + ".args"));
  for (std::string line; std::getline(args, line);) {
    command += " " + ShellQuote(ReplaceAll(line, "@TMP@", tmp.string()));
  }
  fs::path stdin_path = base.string() + ".stdin";
  command += " <" + ShellQuote(fs::exists(stdin_path) ? stdin_path.string() : "/dev/null");
  command += " >" + ShellQuote((tmp / ".stdout").string()) + " 2>" + ShellQuote((tmp / ".stderr").string());
  int raw = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(raw)) << "did not exit normally: " << command;
  std::string exit_code = std::to_string(WEXITSTATUS(raw)) + "\n";

  std::map<std::string, std::string> actual = {
      {".stdout", Slurp(tmp / ".stdout")}, {".stderr", Slurp(tmp / ".stderr")}, {".exit", exit_code}};
  for (const auto& entry : fs::directory_iterator(tmp)) {
    std::string name = entry.path().filename().string();
    if (name[0] != '.') actual[".files/" + name] = Slurp(entry.path());
  }
  for (auto& [suffix, text] : actual) text = ReplaceAll(text, tmp.string(), "@TMP@");

  if (update) {
    fs::remove_all(base.string() + ".files");
    for (const auto& [suffix, text] : actual) Spit(base.string() + suffix, text);
  } else {
    for (const auto& [suffix, text] : actual) {
      fs::path expected = base.string() + suffix;
      ASSERT_TRUE(fs::exists(expected)) << expected << " is missing (run with EASYPLAN_UPDATE_GOLDEN=1)";
      EXPECT_EQ(text, Slurp(expected)) << "for " << expected;
    }
    if (fs::exists(base.string() + ".files")) {
      for (const auto& entry : fs::directory_iterator(base.string() + ".files")) {
        EXPECT_TRUE(actual.count(".files/" + entry.path().filename().string()))
            << "expected output file not written: " << entry.path().filename();
      }
    }
  }
  fs::remove_all(tmp);
}

INSTANTIATE_TEST_SUITE_P(Cli, GoldenTest, ::testing::ValuesIn(ListCases()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenTest);

}  // namespace
}  // namespace easyplan
