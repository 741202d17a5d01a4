// Fuzzes `easyplan tree --tree FILE`: the tree JSON a user dumps from JAX or PyTorch, and the
// formats `tree` writes.
//  - The fast reader (core/tree_json.h ParseTreeJson) must give exactly what the reference path
//    gives (ParseTreeJsonDocument): the same tree, or the same error at the same line:column; the
//    scanner alone (core/tree_json_scan.h) accepts nothing the reference path rejects, and what it
//    accepts reads the same.
//  - api/tree_document.h TreeFromJson on the parsed document agrees with both.
//  - Whatever is accepted and can be totalled survives TreeToJsonText -> parse -> TreeFromJson
//    unchanged (the test suite and users read that output back), and renders as a table and CSV.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/tree_document.h"
#include "api/tree_text.h"
#include "core/document.h"
#include "core/json_parse.h"
#include "core/tree_json.h"
#include "core/tree_json_scan.h"
#include "tests/fuzz/fuzz_util.h"

namespace easyplan::fuzz {
namespace {

constexpr int64_t kMaxTensors = 10000;

void CheckSame(const StatusOr<ParamTree>& a, const StatusOr<ParamTree>& b, const char* what) {
  Check(a.ok() == b.ok(), what);
  if (a.ok()) {
    Check(a->tensors == b->tensors && a->model_type == b->model_type && a->layout == b->layout, what);
  } else {
    Check(a.status().diag().ToString() == b.status().diag().ToString(), what);
  }
}

}  // namespace
}  // namespace easyplan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace easyplan;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Limits limits;
  limits.max_values = 100000;

  StatusOr<ParamTree> reference = ParseTreeJsonDocument(text, "tree.json", limits, fuzz::kMaxTensors);
  fuzz::CheckBadInput(reference.status());
  fuzz::CheckSame(ParseTreeJson(text, "tree.json", limits, fuzz::kMaxTensors), reference,
                  "ParseTreeJson(string_view) differs from ParseTreeJsonDocument");
  if (ParamTree scanned; ScanTreeJson(text, limits, fuzz::kMaxTensors, &scanned)) {
    fuzz::CheckSame(scanned, reference, "ScanTreeJson accepted and differs from ParseTreeJsonDocument");
  }

  StatusOr<Document> document = ParseJsonDocument(text, "tree.json", limits);
  if (!document.ok()) return 0;
  StatusOr<ParamTree> tree = api::TreeFromJson(document->root(), "tree.json", fuzz::kMaxTensors);
  fuzz::CheckBadInput(tree.status());
  fuzz::Check(tree.ok() == reference.ok(), "api::TreeFromJson and ParseTreeJsonDocument disagree");
  if (!tree.ok()) return 0;
  StatusOr<TreeTotals> totals = tree->Totals();
  fuzz::CheckBadInput(totals.status());
  if (!totals.ok()) return 0;
  (void)api::TreeToTable(*tree, *totals);
  (void)api::TreeToCsv(*tree, *totals);
  std::string json_text = api::TreeToJsonText(*tree, *totals);
  if (!fuzz::RoundTrippable(document->root())) return 0;  // names with invalid UTF-8 are replaced
  StatusOr<Document> again = ParseJsonDocument(json_text, "again.json", limits);
  fuzz::Check(again.ok(), "tree --format json output does not parse");
  fuzz::Check(again->root() == api::TreeToJson(*tree, *totals), "TreeToJsonText differs from TreeToJson");
  StatusOr<ParamTree> reread = api::TreeFromJson(again->root(), "again.json", fuzz::kMaxTensors);
  fuzz::Check(reread.ok(), "tree --format json output is not a valid --tree input");
  fuzz::Check(reread->tensors == tree->tensors, "tree JSON round trip changed the tensors");
  fuzz::Check(reread->model_type == tree->model_type && reread->layout == tree->layout,
              "tree JSON round trip changed model_type or layout");
  fuzz::CheckSame(ParseTreeJson(json_text, "again.json", limits, fuzz::kMaxTensors), reread,
                  "ParseTreeJson on tree output differs from the reference");
  return 0;
}
