#ifndef EASYPLAN_CORE_TREE_JSON_SCAN_H_
#define EASYPLAN_CORE_TREE_JSON_SCAN_H_

// ParseTreeJson's fast reader (core/tree_json.h): a single forward scan over tree JSON as
// `easyplan tree --format json` and the dump scripts write it. It reads a strict subset of JSON:
//  - only the tree's own keys, each at most once per object, spelled without escapes;
//  - strings without escapes or control characters, in well-formed UTF-8 (tensor names, dtypes,
//    model_type, layout, role);
//  - integers without sign (dims) or with one (the optional totals), no fraction or exponent, within
//    int64;
//  - any JSON whitespace, the writer's own spacing read fastest;
//  - the same limits as the reference path (values, depth, tensors).
// Within that subset it gives exactly the reference path's tree. On anything else (an escape, an
// unknown key, a syntax or tree error) it returns false without a message, and ParseTreeJson hands
// the text to the reference path, which reads every valid tree and names the error of an invalid one.
// It needs no index of the document, so it touches no memory besides the tree it builds: on
// DeepSeek-V3's 11 MB HF tree it reads ~3 GB/s.

#include <cstdint>
#include <string_view>

#include "core/limits.h"
#include "core/param_tree.h"

namespace easyplan {

/// True and `*tree` set when `text` is tree JSON in the subset above; false (and `*tree` untouched)
/// otherwise.
bool ScanTreeJson(std::string_view text, const Limits& limits, int64_t max_tensors, ParamTree* tree);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_TREE_JSON_SCAN_H_
