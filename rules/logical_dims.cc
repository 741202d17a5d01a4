#include "rules/logical_dims.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>

#include "core/document.h"
#include "core/json_pointer.h"
#include "core/yaml_parse.h"
#include "rules/match_memo.h"
#include "schemas/schema_reader.h"

namespace easyplan::rules {

struct RE2SetHolder {
  re2::RE2::Set set{re2::RE2::Options(), re2::RE2::UNANCHORED};
};

namespace {

// An entry's `dim`: a tensor dim index, negative from the end.
StatusOr<int> DimIndex(schemas::SchemaReader& reader, const Json& entry, const std::string& pointer) {
  auto index = entry.find("dim");
  if (index == entry.end() || !index->is_number_integer() || index->get<int64_t>() < -16 ||
      index->get<int64_t>() > 16) {
    return reader.Error(pointer + "/dim", "expected a dim index between -16 and 16");
  }
  return index->get<int>();
}

}  // namespace

LogicalDims::LogicalDims(LogicalDims&&) noexcept = default;
LogicalDims& LogicalDims::operator=(LogicalDims&&) noexcept = default;
LogicalDims::~LogicalDims() = default;

StatusOr<LogicalDims> LogicalDims::Parse(std::string_view text, const std::string& path) {
  EP_ASSIGN_OR_RETURN(Document doc, ParseYamlDocument(text, path));
  return Parse(doc);
}

StatusOr<LogicalDims> LogicalDims::Parse(const Document& doc) {
  schemas::SchemaReader reader(doc);
  const Json& root = doc.root();
  EP_RETURN_IF_ERROR(reader.CheckKeys(root, "", {"dims", "fused"}));
  auto list = root.find("dims");
  if (list == root.end() || !list->is_array()) return reader.Error("/dims", "expected a list of logical dims");
  LogicalDims dims;
  dims.set_ = std::make_unique<RE2SetHolder>();
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& entry = (*list)[i];
    const std::string pointer = PointerToElement("/dims", i);
    EP_RETURN_IF_ERROR(reader.CheckKeys(entry, pointer, {"match", "dim", "count", "what"}));
    LogicalDim dim;
    EP_ASSIGN_OR_RETURN(dim.pattern, reader.String(entry, pointer, "match", true));
    EP_ASSIGN_OR_RETURN(dim.what, reader.String(entry, pointer, "what", true));
    EP_ASSIGN_OR_RETURN(dim.dim, DimIndex(reader, entry, pointer));
    auto keys = entry.find("count");
    if (keys == entry.end() || !keys->is_array() || keys->empty()) {
      return reader.Error(pointer + "/count", "expected a list of config keys");
    }
    for (const Json& key : *keys) {
      if (!key.is_string()) return reader.Error(pointer + "/count", "expected config key names");
      dim.count_keys.push_back(key.get<std::string>());
    }
    dim.loc = doc.Locate(pointer);
    std::string error;
    if (dims.set_->set.Add(dim.pattern, &error) < 0) {
      return reader.Error(pointer + "/match", "invalid pattern: " + error);
    }
    dims.number_blind_ = dims.number_blind_ && IsNumberBlind(dim.pattern);
    dims.dims_.push_back(std::move(dim));
  }
  if (!dims.set_->set.Compile()) return reader.Error("/dims", "the patterns exceed RE2's memory budget");
  EP_RETURN_IF_ERROR(ParseFused(doc, reader, dims));
  return dims;
}

Status LogicalDims::ParseFused(const Document& doc, schemas::SchemaReader& reader, LogicalDims& dims) {
  auto list = doc.root().find("fused");
  if (list == doc.root().end()) return Status();
  if (!list->is_array()) return reader.Error("/fused", "expected a list of fused dims");
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& entry = (*list)[i];
    const std::string pointer = PointerToElement("/fused", i);
    EP_RETURN_IF_ERROR(reader.CheckKeys(entry, pointer, {"match", "dim", "parts"}));
    FusedDim fused;
    EP_ASSIGN_OR_RETURN(fused.pattern, reader.String(entry, pointer, "match", true));
    EP_ASSIGN_OR_RETURN(fused.dim, DimIndex(reader, entry, pointer));
    // parts: [{q: num_attention_heads}, {k: num_key_value_heads}, ...], in the dim's order.
    auto parts = entry.find("parts");
    if (parts == entry.end() || !parts->is_array() || parts->size() < 2) {
      return reader.Error(pointer + "/parts", "expected a list of at least two {NAME: config key} parts");
    }
    for (const Json& part : *parts) {
      if (!part.is_object() || part.size() != 1 || !part.begin()->is_string()) {
        return reader.Error(pointer + "/parts", "expected {NAME: config key} for each part");
      }
      fused.names.push_back(part.begin().key());
      fused.count_keys.push_back(part.begin()->get<std::string>());
    }
    fused.loc = doc.Locate(pointer);
    re2::RE2::Options options;
    options.set_log_errors(false);
    auto re = std::make_unique<re2::RE2>(fused.pattern, options);
    if (!re->ok()) return reader.Error(pointer + "/match", "invalid pattern: " + re->error());
    dims.number_blind_ = dims.number_blind_ && IsNumberBlind(fused.pattern);
    dims.fused_patterns_.push_back(std::move(re));
    dims.fused_.push_back(std::move(fused));
  }
  return Status();
}

const FusedDim* LogicalDims::FindFused(std::string_view name) const {
  for (size_t k = 0; k < fused_.size(); ++k) {
    if (re2::RE2::PartialMatch(name, *fused_patterns_[k])) return &fused_[k];
  }
  return nullptr;
}

std::vector<int64_t> LogicalDims::FusedPartSizes(const FusedDim& fused, int64_t size, const Json& config) {
  std::vector<int64_t> counts;
  int64_t total = 0;
  for (const std::string& key : fused.count_keys) {
    auto it = config.find(key);
    if (it == config.end() || !it->is_number_integer() || it->get<int64_t>() <= 0) return {};
    counts.push_back(it->get<int64_t>());
    if (__builtin_add_overflow(total, counts.back(), &total)) return {};
  }
  if (total <= 0 || size % total != 0) return {};
  for (int64_t& count : counts) count *= size / total;  // each part's share of the dim, in elements
  return counts;
}

const LogicalDim* LogicalDims::Find(std::string_view name) const {
  if (dims_.empty()) return nullptr;
  std::vector<int> matches;
  if (!set_->set.Match(name, &matches) || matches.empty()) return nullptr;
  return &dims_[static_cast<size_t>(*std::min_element(matches.begin(), matches.end()))];
}

std::optional<int64_t> LogicalDims::Count(const LogicalDim& dim, const Json& config) {
  for (const std::string& key : dim.count_keys) {
    auto it = config.find(key);
    if (it != config.end() && it->is_number_integer()) return it->get<int64_t>();
  }
  return std::nullopt;
}

}  // namespace easyplan::rules
