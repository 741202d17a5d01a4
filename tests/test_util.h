#ifndef EASYPLAN_TESTS_TEST_UTIL_H_
#define EASYPLAN_TESTS_TEST_UTIL_H_

#include <string>
#include <vector>

#include "core/json.h"

namespace easyplan::testing {

/// Absolute path of the source tree (tests run with it as the working directory).
std::string SourceDir();

/// Directory of the shared corpus of real configs, or "" when it is not present on this machine.
std::string CorpusDir();

/// Names of the corpus folders that hold a config.json, sorted; {""} when the corpus is absent (one
/// parameterised instance, which skips with a message).
std::vector<std::string> CorpusModels();

/// EasyDeL's default PartitionAxis with every field, as `resolve` gives it (decode_* included).
Json DefaultPartitionAxis();

/// Reads a whole file; aborts the test binary on failure (test inputs are ours).
std::string ReadTestFile(const std::string& path);

}  // namespace easyplan::testing

#endif  // EASYPLAN_TESTS_TEST_UTIL_H_
