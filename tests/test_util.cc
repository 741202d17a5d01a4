#include "tests/test_util.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/status.h"

namespace easyplan::testing {

std::string SourceDir() { return std::filesystem::current_path().string(); }

std::string CorpusDir() {
  const char* dir = std::getenv("EASYPLAN_CORPUS_DIR");
#ifdef EASYPLAN_DEFAULT_CORPUS_DIR
  if (dir == nullptr) dir = EASYPLAN_DEFAULT_CORPUS_DIR;
#endif
  if (dir == nullptr || !std::filesystem::is_directory(dir)) return "";
  return std::filesystem::canonical(dir).string();
}

std::string ReadTestFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EP_CHECK(in.good(), "cannot open test file " + path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace easyplan::testing
