#ifndef EASYPLAN_TESTS_TEST_UTIL_H_
#define EASYPLAN_TESTS_TEST_UTIL_H_

#include <string>
#include <vector>

#include "core/json.h"

namespace easyplan::testing {

/// Absolute path of the source tree (tests run with it as the working directory).
std::string SourceDir();

/// `text` as a gtest parameter name: every character that is not a letter or digit becomes '_'.
std::string TestNameOf(std::string text);

/// Directory of the shared corpus of real configs, or "" when it is not present on this machine.
std::string CorpusDir();

/// Directory of the corpus of real configs of the families added in issue 20 (beside the corpus:
/// EASYPLAN_CORPUS_FAMILIES_DIR, else CorpusDir() + "-families"), or "" when it is not present.
std::string CorpusFamiliesDir();

/// Why a test that reads the corpus skips, or "" when the corpus is present. Every such test skips
/// with these words (EASYPLAN_SKIP_WITHOUT_CORPUS), so scripts/test's summary gives the one cause once.
std::string CorpusAbsentReason();

/// The same for the families corpus: the corpus's own reason when that is absent too.
std::string CorpusFamiliesAbsentReason();

/// Skips the test (from its body or SetUp) when the corpus, or the families corpus, is absent.
#define EASYPLAN_SKIP_WITHOUT_CORPUS()                                                                       \
  if (const std::string easyplan_skip_ = ::easyplan::testing::CorpusAbsentReason(); !easyplan_skip_.empty()) \
  GTEST_SKIP() << easyplan_skip_
#define EASYPLAN_SKIP_WITHOUT_CORPUS_FAMILIES()                                                                      \
  if (const std::string easyplan_skip_ = ::easyplan::testing::CorpusFamiliesAbsentReason(); !easyplan_skip_.empty()) \
  GTEST_SKIP() << easyplan_skip_

/// Names of the corpus folders that hold a config.json, sorted; {""} when the corpus is absent (one
/// parameterised instance, which skips with a message).
std::vector<std::string> CorpusModels();

/// EasyDeL's default PartitionAxis with every field, as `resolve` gives it (decode_* included).
Json DefaultPartitionAxis();

/// Reads a whole file; aborts the test binary on failure (test inputs are ours).
std::string ReadTestFile(const std::string& path);

}  // namespace easyplan::testing

#endif  // EASYPLAN_TESTS_TEST_UTIL_H_
