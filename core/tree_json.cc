#include "core/tree_json.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/did_you_mean.h"
#include "core/document.h"
#include "core/dtype.h"
#include "core/tree_json_scan.h"
#include "core/unique_names.h"

namespace easyplan {

static_assert(kTreeJsonPadding >= simdjson::SIMDJSON_PADDING, "kTreeJsonPadding must cover simdjson's padding");

// -----------------------------------------------------------------------------------------------
// The reference path.

StatusOr<ParamTree> TreeFromJsonValue(const Json& json, const std::string& file, int64_t max_tensors) {
  auto error = [&](const std::string& pointer, const std::string& message) {
    return Status::BadInput(SourceLoc{file, pointer}, message);
  };
  if (!json.is_object()) {
    return error("", "expected a tree object {model_type, layout, params}, found " + std::string(JsonTypeName(json)));
  }
  ParamTree tree;
  if (auto it = json.find("model_type"); it != json.end() && !it->is_null()) {
    if (!it->is_string()) return error("/model_type", "expected a string, found " + std::string(JsonTypeName(*it)));
    tree.model_type = it->get<std::string>();
  }
  if (auto it = json.find("layout"); it != json.end()) {
    std::optional<Layout> layout = it->is_string() ? ParseLayout(it->get<std::string>()) : std::nullopt;
    if (!layout) return error("/layout", "expected \"easydel\" or \"hf\", found " + JsonForMessage(*it));
    tree.layout = *layout;
  }
  auto params = json.find("params");
  if (params == json.end() || !params->is_array()) return error("/params", "expected a list of tensors");
  if (static_cast<int64_t>(params->size()) > max_tensors) {
    return error("/params", fmt::format("{} tensors exceed the limit of {} (raise it with --max-tensors)",
                                        params->size(), max_tensors));
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < params->size(); ++i) {
    const Json& entry = (*params)[i];
    std::string pointer = "/params/" + std::to_string(i);
    if (!entry.is_object()) {
      return error(pointer, "expected {name, shape, dtype}, found " + std::string(JsonTypeName(entry)));
    }
    auto name = entry.find("name");
    if (name == entry.end() || !name->is_string() || name->get<std::string>().empty()) {
      return error(pointer + "/name", "expected a non-empty tensor name");
    }
    TensorEntry tensor;
    tensor.name = name->get<std::string>();
    if (!seen.insert(tensor.name).second) return error(pointer + "/name", "tensor '" + tensor.name + "' appears twice");
    auto shape = entry.find("shape");
    if (shape == entry.end() || !shape->is_array()) {
      return error(pointer + "/shape", "tensor '" + tensor.name + "': expected a list of dims");
    }
    std::vector<int64_t> dims;
    for (const Json& dim : *shape) {
      if (!dim.is_number_integer() || dim.get<int64_t>() < 0) {
        return error(pointer + "/shape",
                     "tensor '" + tensor.name + "': dims must be non-negative integers, found " + JsonForMessage(dim));
      }
      dims.push_back(dim.get<int64_t>());
    }
    tensor.shape = Shape(std::move(dims));
    auto dtype = entry.find("dtype");
    if (dtype == entry.end() || !dtype->is_string()) {
      return error(pointer + "/dtype", "tensor '" + tensor.name + "': expected a dtype name");
    }
    std::optional<DType> parsed = ParseDType(dtype->get<std::string>());
    if (!parsed) {
      std::string message = "tensor '" + tensor.name + "': unknown dtype '" + dtype->get<std::string>() + "'";
      std::vector<std::string> names(AllDTypeNames().begin(), AllDTypeNames().end());
      if (auto suggestion = SuggestClosest(dtype->get<std::string>(), names)) {
        message += " (did you mean '" + *suggestion + "'?)";
      }
      return error(pointer + "/dtype", message);
    }
    tensor.dtype = *parsed;
    if (auto role = entry.find("role"); role != entry.end()) {
      std::string text = role->is_string() ? role->get<std::string>() : "";
      if (text == "buffer") {
        tensor.role = TensorRole::kBuffer;
      } else if (text == "scale") {
        tensor.role = TensorRole::kScale;
      } else if (text != "parameter") {
        return error(pointer + "/role",
                     "expected \"parameter\", \"buffer\" or \"scale\", found " + JsonForMessage(*role));
      }
    }
    tree.tensors.push_back(std::move(tensor));
  }
  return tree;
}

StatusOr<ParamTree> ParseTreeJsonDocument(std::string_view text, const std::string& file, const Limits& limits,
                                          int64_t max_tensors) {
  EP_ASSIGN_OR_RETURN(Document doc, ParseJsonDocument(text, file, limits));
  auto tree = TreeFromJsonValue(doc.root(), file, max_tensors);
  if (!tree.ok()) {
    // Add the line:column of the offending value.
    Status status = tree.status();
    status.mutable_diag().loc = doc.Locate(status.diag().loc.pointer);
    return status;
  }
  return tree;
}

// -----------------------------------------------------------------------------------------------
// The fast path. It accepts only what it can prove the reference path accepts with the same result,
// and gives up (returns false) on anything else:
//  - any simdjson error: invalid JSON, a wrong type, an integer outside int64;
//  - any key other than the tree's own (unknown keys are legal, but skipping a value unread would
//    leave it unvalidated), a key seen twice in one object (the last one wins in the reference path),
//    or a key spelled with escapes (it would not compare equal here);
//  - a backslash in any string it reads (model_type, layout, name, dtype, role): strings are read in
//    place, undecoded; escapes are rare there, and the reference path's checks of \u escapes
//    (unpaired surrogates) differ from simdjson's;
//  - a limit: more values than limits.max_values (counted as the reference parser counts: every
//    value once), nesting deeper than limits.max_depth (a tree nests 4 levels: root, params, tensor,
//    shape), more than max_tensors tensors;
//  - a tree error (empty or duplicate name, negative dim, unknown dtype or role, ...).
// simdjson's stage 1 checks the whole input as the reference parser checks strings: valid UTF-8, no
// unescaped control characters. Every value is read, so every token is validated, and the document
// must end after the root object.

namespace {

namespace od = simdjson::ondemand;

// Bits for the keys of one object, to refuse duplicates.
enum KeyBit : unsigned {
  kModelType = 1u << 0,
  kLayout = 1u << 1,
  kParams = 1u << 2,
  kTotalTensors = 1u << 3,
  kTotalParams = 1u << 4,
  kTotalBytes = 1u << 5,
  kName = 1u << 6,
  kShape = 1u << 7,
  kDType = 1u << 8,
  kRole = 1u << 9,
};

constexpr int kTreeDepth = 4;  // root object, params array, tensor object, shape array
// A tensor takes at least 37 characters ({"name":"a","shape":[],"dtype":"f32"}) and a comma separates
// two, so size / 36 + 1 bounds the count.
constexpr size_t kMinTensorChars = 36;

class FastTreeParser {
 public:
  FastTreeParser(const Limits& limits, int64_t max_tensors) : limits_(limits), max_tensors_(max_tensors) {}

  bool Run(simdjson::padded_string_view json, ParamTree* out) {
    if (limits_.max_depth < kTreeDepth) return false;
    // The vector never moves its entries: no tensor takes fewer than kMinTensorChars characters, so this
    // bounds the count; the pages past the real count are reserved, never touched.
    reserve_ = std::min(json.size() / kMinTensorChars + 1, static_cast<size_t>(std::max<int64_t>(max_tensors_, 0)));
    od::parser parser;
    od::document doc;
    if (parser.iterate(json).get(doc) != simdjson::SUCCESS) return false;
    od::object root;
    if (doc.get_object().get(root) != simdjson::SUCCESS) return false;
    Count();  // the root
    ParamTree tree;
    tree.tensors.reserve(reserve_);
    unsigned seen = 0;
    for (auto member : root) {
      od::field field;
      if (std::move(member).get(field) != simdjson::SUCCESS) return false;
      const od::raw_json_string key = field.key();
      od::value& value = field.value();
      if (!Count()) return false;
      if (key.unsafe_is_equal("params")) {
        if (!Once(&seen, kParams) || !Params(value, &tree.tensors)) return false;
      } else if (key.unsafe_is_equal("model_type")) {
        if (!Once(&seen, kModelType) || !ModelType(value, &tree.model_type)) return false;
      } else if (key.unsafe_is_equal("layout")) {
        std::string_view text;
        if (!Once(&seen, kLayout) || !PlainString(value, &text)) return false;
        std::optional<Layout> layout = ParseLayout(text);
        if (!layout) return false;
        tree.layout = *layout;
      } else if (key.unsafe_is_equal("total_tensors")) {
        if (!Once(&seen, kTotalTensors) || !Integer(value)) return false;
      } else if (key.unsafe_is_equal("total_params")) {
        if (!Once(&seen, kTotalParams) || !Integer(value)) return false;
      } else if (key.unsafe_is_equal("total_bytes")) {
        if (!Once(&seen, kTotalBytes) || !Integer(value)) return false;
      } else {
        return false;
      }
    }
    if ((seen & kParams) == 0) return false;
    // Nothing may follow the root object.
    if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS) return false;
    if (!NamesAreUnique(tree.tensors)) return false;
    *out = std::move(tree);
    return true;
  }

 private:
  bool Count() { return ++values_ <= limits_.max_values; }

  static bool Once(unsigned* seen, unsigned bit) {
    if (*seen & bit) return false;
    *seen |= bit;
    return true;
  }

  static bool Integer(od::value& value) {
    int64_t ignored = 0;
    return value.get_int64().get(ignored) == simdjson::SUCCESS;
  }

  // A string without escapes (see above), read in place: simdjson's stage 1 has already checked the
  // whole input for invalid UTF-8 and unescaped control characters, so the bytes between the quotes
  // are the value. The token runs from the opening quote to the next structural character.
  static bool PlainString(od::value& value, std::string_view* text) {
    const std::string_view token = value.raw_json_token();
    const size_t close = token.rfind('"');
    if (token.size() < 2 || token[0] != '"' || close == 0 || close == std::string_view::npos) return false;
    *text = token.substr(1, close - 1);
    if (text->find('\\') != std::string_view::npos) return false;
    od::raw_json_string ignored;
    return value.get_raw_json_string().get(ignored) == simdjson::SUCCESS;
  }

  bool ModelType(od::value& value, std::string* model_type) {
    bool is_null = false;
    if (value.is_null().get(is_null) != simdjson::SUCCESS) return false;
    if (is_null) return true;
    std::string_view text;
    if (!PlainString(value, &text)) return false;
    model_type->assign(text);
    return true;
  }

  bool Params(od::value& value, std::vector<TensorEntry>* tensors) {
    od::array params;
    if (value.get_array().get(params) != simdjson::SUCCESS) return false;
    for (auto element : params) {
      od::value entry;
      if (element.get(entry) != simdjson::SUCCESS || !Count()) return false;
      if (static_cast<int64_t>(tensors->size()) >= max_tensors_) return false;
      TensorEntry& tensor = tensors->emplace_back();
      if (!Tensor(entry, &tensor)) return false;
    }
    return true;
  }

  bool Tensor(od::value& value, TensorEntry* tensor) {
    od::object entry;
    if (value.get_object().get(entry) != simdjson::SUCCESS) return false;
    unsigned seen = 0;
    for (auto member : entry) {
      od::field field;
      if (std::move(member).get(field) != simdjson::SUCCESS) return false;
      const od::raw_json_string key = field.key();
      od::value& item = field.value();
      if (!Count()) return false;
      if (key.unsafe_is_equal("name")) {
        std::string_view name;
        if (!Once(&seen, kName) || !PlainString(item, &name) || name.empty()) return false;
        tensor->name.assign(name);
      } else if (key.unsafe_is_equal("shape")) {
        if (!Once(&seen, kShape) || !Dims(item, &dims_)) return false;
        tensor->shape = Shape(dims_);
      } else if (key.unsafe_is_equal("dtype")) {
        std::string_view text;
        if (!Once(&seen, kDType) || !PlainString(item, &text)) return false;
        const std::optional<DType> dtype = CachedDType(text);
        if (!dtype) return false;
        tensor->dtype = *dtype;
      } else if (key.unsafe_is_equal("role")) {
        std::string_view text;
        if (!Once(&seen, kRole) || !PlainString(item, &text)) return false;
        if (text == "buffer") {
          tensor->role = TensorRole::kBuffer;
        } else if (text == "scale") {
          tensor->role = TensorRole::kScale;
        } else if (text != "parameter") {
          return false;
        }
      } else {
        return false;
      }
    }
    return (seen & (kName | kShape | kDType)) == (kName | kShape | kDType);
  }

  bool Dims(od::value& value, std::vector<int64_t>* dims) {
    dims->clear();
    od::array shape;
    if (value.get_array().get(shape) != simdjson::SUCCESS) return false;
    for (auto element : shape) {
      int64_t dim = 0;
      if (element.get_int64().get(dim) != simdjson::SUCCESS || dim < 0 || !Count()) return false;
      dims->push_back(dim);
    }
    return true;
  }

  static bool NamesAreUnique(const std::vector<TensorEntry>& tensors) {
    return !FirstDuplicateName(tensors.size(), [&tensors](size_t i) { return std::string_view(tensors[i].name); });
  }

  // Trees spell a handful of dtypes tens of thousands of times: each distinct spelling is parsed once.
  std::optional<DType> CachedDType(std::string_view text) {
    for (const auto& [spelling, dtype] : dtypes_) {
      if (spelling == text) return dtype;
    }
    std::optional<DType> dtype = ParseDType(text);
    if (dtype && dtypes_.size() < kMaxCachedDTypes) dtypes_.emplace_back(std::string(text), *dtype);
    return dtype;
  }

  const Limits& limits_;
  const int64_t max_tensors_;
  size_t values_ = 0;
  size_t reserve_ = 0;
  std::vector<int64_t> dims_;  // reused across tensors
  static constexpr size_t kMaxCachedDTypes = 16;
  std::vector<std::pair<std::string, DType>> dtypes_;  // spelling -> dtype, for CachedDType
};

bool FastPath(simdjson::padded_string_view json, const Limits& limits, int64_t max_tensors, ParamTree* tree) {
  // The reference parser skips a leading UTF-8 byte order mark; simdjson leaves that to its caller.
  std::string_view text = json;
  if (text.starts_with("\xEF\xBB\xBF")) {
    json = simdjson::padded_string_view(text.data() + 3, text.size() - 3, json.capacity() - 3);
  }
  return FastTreeParser(limits, max_tensors).Run(json, tree);
}

bool FastPathCopying(std::string_view text, const Limits& limits, int64_t max_tensors, ParamTree* tree) {
  simdjson::padded_string padded(text);
  return FastPath(padded, limits, max_tensors, tree);
}

}  // namespace

bool ParseTreeJsonFastPath(std::string_view text, const Limits& limits, int64_t max_tensors, ParamTree* tree) {
  return FastPathCopying(text, limits, max_tensors, tree);
}

StatusOr<ParamTree> ParseTreeJson(std::string_view text, size_t readable, const std::string& file, const Limits& limits,
                                  int64_t max_tensors) {
  ParamTree tree;
  if (ScanTreeJson(text, limits, max_tensors, &tree)) return tree;
  const bool accepted =
      readable >= text.size() + simdjson::SIMDJSON_PADDING
          ? FastPath(simdjson::padded_string_view(text.data(), text.size(), readable), limits, max_tensors, &tree)
          : FastPathCopying(text, limits, max_tensors, &tree);
  if (accepted) return tree;
  return ParseTreeJsonDocument(text, file, limits, max_tensors);
}

StatusOr<ParamTree> ParseTreeJson(std::string_view text, const std::string& file, const Limits& limits,
                                  int64_t max_tensors) {
  return ParseTreeJson(text, text.size(), file, limits, max_tensors);
}

StatusOr<ParamTree> ParseTreeJson(const std::string& text, const std::string& file, const Limits& limits,
                                  int64_t max_tensors) {
  return ParseTreeJson(text, text.capacity(), file, limits, max_tensors);
}

StatusOr<ParamTree> ParseTreeJson(const PaddedText& text, const std::string& file, const Limits& limits,
                                  int64_t max_tensors) {
  return ParseTreeJson(text.text(), text.readable(), file, limits, max_tensors);
}

}  // namespace easyplan
