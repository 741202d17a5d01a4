#include "planner/runtime_vocabulary.h"

#include <fmt/format.h>

#include "core/json_pointer.h"

namespace easyplan::planner {
namespace {

Status Malformed(const Document& doc, const std::string& pointer, const std::string& message) {
  return Status::BadInput(doc.Locate(pointer), message);
}

StatusOr<std::set<std::string>> Strings(const Document& doc, const Json& value, const std::string& pointer) {
  if (!value.is_array()) return Malformed(doc, pointer, "expected a list of strings");
  std::set<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) return Malformed(doc, pointer + "/" + std::to_string(i), "expected a string");
    out.insert(value[i].get<std::string>());
  }
  return out;
}

}  // namespace

std::string RuntimeVocabulary::Pinned() const {
  return fmt::format("{} {} at {}", repo, paths.empty() ? std::string() : paths.front(), commit.substr(0, 12));
}

Status RuntimeVocabulary::Check(std::string_view list, std::string_view name) const {
  auto it = lists.find(list);
  if (it != lists.end() && it->second.count(std::string(name)) > 0) return Status();
  return Status::Internal(
      fmt::format("the export wrote '{}', which is not among the {} of {} ({})", name, list, Pinned(), file));
}

Status RuntimeVocabulary::CheckChoice(std::string_view name, std::string_view value) const {
  auto it = choices.find(name);
  if (it == choices.end() || it->second.count(std::string(value)) > 0) return Status();
  return Status::Internal(
      fmt::format("the export wrote {} '{}', which is not among its choices in {} ({})", name, value, Pinned(), file));
}

StatusOr<RuntimeVocabulary> ParseRuntimeVocabulary(const Document& doc) {
  const Json& root = doc.root();
  if (!root.is_object()) return Malformed(doc, "", "expected a mapping with 'source' and the lists");
  RuntimeVocabulary out;
  out.file = doc.file();
  auto source = root.find("source");
  if (source == root.end() || !source->is_object())
    return Malformed(doc, "", "expected 'source': {repo, paths, commit}");
  for (const char* key : {"repo", "commit"}) {
    auto it = source->find(key);
    if (it == source->end() || !it->is_string()) {
      return Malformed(doc, "/source", fmt::format("expected '{}' as a string", key));
    }
    (std::string_view(key) == "repo" ? out.repo : out.commit) = it->get<std::string>();
  }
  auto paths = source->find("paths");
  if (paths == source->end()) return Malformed(doc, "/source", "expected 'paths', the files the lists come from");
  EP_RETURN_IF_ERROR(Strings(doc, *paths, "/source/paths").status());
  for (const Json& path : *paths) out.paths.push_back(path.get<std::string>());
  for (const auto& [key, value] : root.items()) {
    if (key == "source") continue;
    const std::string pointer = PointerToMember("", key);
    if (key == "choices") {
      if (!value.is_object()) return Malformed(doc, pointer, "expected a mapping of names to their choices");
      for (const auto& [name, values] : value.items()) {
        EP_ASSIGN_OR_RETURN(out.choices[name], Strings(doc, values, PointerToMember(pointer, name)));
      }
      continue;
    }
    EP_ASSIGN_OR_RETURN(out.lists[key], Strings(doc, value, pointer));
  }
  if (out.lists.empty()) return Malformed(doc, "", "expected at least one list of names besides 'source'");
  return out;
}

}  // namespace easyplan::planner
