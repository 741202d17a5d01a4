#include "cli/config_input.h"

#include <istream>

namespace easyplan::cli {
namespace {

StatusOr<std::string> ReadStdin(Context& ctx) {
  std::string text;
  char buffer[65536];
  while (ctx.in.read(buffer, sizeof(buffer)) || ctx.in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(ctx.in.gcount()));
    if (text.size() > kMaxInputBytes) {
      return Status::BadInput({"<stdin>"}, "input is larger than " + std::to_string(kMaxInputBytes) + " bytes");
    }
  }
  return text;
}

}  // namespace

StatusOr<Document> LoadConfigDocument(Context& ctx, const std::string& spec) {
  if (spec == "-") {
    EP_ASSIGN_OR_RETURN(std::string text, ReadStdin(ctx));
    return ParseJsonDocument(text, "<stdin>");
  }
  std::string path = spec;
  if (ctx.fs.IsDirectory(spec)) {
    path = spec + (spec.ends_with("/") ? "" : "/") + "config.json";
    if (!ctx.fs.Exists(path)) {
      return Status::BadInput({spec}, "directory has no config.json");
    }
  }
  EP_ASSIGN_OR_RETURN(std::string text, ctx.fs.ReadFile(path, kMaxInputBytes));
  return ParseJsonDocument(text, path);
}

StatusOr<Document> LoadOverridesDocument(Context& ctx, const std::string& path) {
  EP_ASSIGN_OR_RETURN(std::string text, ctx.fs.ReadFile(path, kMaxInputBytes));
  if (path.ends_with(".yaml") || path.ends_with(".yml")) return ParseYamlDocument(text, path);
  auto json = ParseJsonDocument(text, path);
  if (json.ok() || path.ends_with(".json")) return json;
  return ParseYamlDocument(text, path);
}

}  // namespace easyplan::cli
