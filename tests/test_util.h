#ifndef EASYPLAN_TESTS_TEST_UTIL_H_
#define EASYPLAN_TESTS_TEST_UTIL_H_

#include <string>

namespace easyplan::testing {

/// Absolute path of the source tree (tests run with it as the working directory).
std::string SourceDir();

/// Directory of the shared corpus of real configs, or "" when it is not present on this machine.
std::string CorpusDir();

/// Reads a whole file; aborts the test binary on failure (test inputs are ours).
std::string ReadTestFile(const std::string& path);

}  // namespace easyplan::testing

#endif  // EASYPLAN_TESTS_TEST_UTIL_H_
