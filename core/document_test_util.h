#ifndef EASYPLAN_CORE_DOCUMENT_TEST_UTIL_H_
#define EASYPLAN_CORE_DOCUMENT_TEST_UTIL_H_

// Test helpers shared by the document and parser tests of core/.

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "core/document.h"
#include "core/json_parse.h"

namespace easyplan::testing {

/// "line:column" of the value at `pointer`, for compact expectations.
inline std::string At(const Document& doc, std::string_view pointer) {
  const SourceLoc loc = doc.Locate(pointer);
  return std::to_string(loc.line) + ":" + std::to_string(loc.column);
}

/// `text` parsed as config.json; a parse error fails the test (and yields an empty document).
inline Document ParseJsonOrDie(std::string_view text) {
  StatusOr<Document> doc = ParseJsonDocument(text, "config.json");
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  return doc.ok() ? *doc : Document();
}

}  // namespace easyplan::testing

#endif  // EASYPLAN_CORE_DOCUMENT_TEST_UTIL_H_
