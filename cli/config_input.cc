#include "cli/config_input.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "core/json_parse.h"
#include "core/yaml_parse.h"

namespace easyplan::cli {
StatusOr<std::string> ReadStdin(Context& ctx) {
  // main() marks std::cin bad when descriptor 0 was closed (`easyplan resolve - <&-`).
  if (ctx.in.bad()) return Status::BadInput({"<stdin>"}, "cannot read standard input: it is closed");
  std::string text;
  char buffer[65536];
  while (ctx.in.read(buffer, sizeof(buffer)) || ctx.in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(ctx.in.gcount()));
    if (text.size() > ctx.limits.max_input_bytes) {
      return Status::BadInput({"<stdin>"},
                              "input is larger than " + std::to_string(ctx.limits.max_input_bytes) + " bytes",
                              {LimitNote("--max-input-bytes", ctx.limits.max_input_bytes)});
    }
  }
  // A read error (stdin is a directory, EIO) looks like end of input to the stream; stdio knows.
  if (ctx.in.bad() || (&ctx.in == &std::cin && std::ferror(stdin))) {
    const int error = errno;
    return Status::BadInput({"<stdin>"}, "cannot read standard input" +
                                             (error != 0 ? ": " + std::string(std::strerror(error)) : std::string()));
  }
  return text;
}

namespace {

// Reads a file within the input size limit; the limit error says how to raise it.
StatusOr<std::string> ReadInput(Context& ctx, const std::string& path) {
  StatusOr<std::string> text = ctx.fs.ReadFile(path, ctx.limits.max_input_bytes);
  if (!text.ok() && text.status().diag().message.find("is larger than") != std::string::npos) {
    Status status = text.status();
    status.mutable_diag().notes.push_back(LimitNote("--max-input-bytes", ctx.limits.max_input_bytes));
    return status;
  }
  return text;
}

}  // namespace

StatusOr<Document> LoadConfigDocument(Context& ctx, const std::string& spec) {
  if (spec == "-") {
    EP_ASSIGN_OR_RETURN(std::string text, ReadStdin(ctx));
    return ParseJsonDocument(text, "<stdin>", ctx.limits);
  }
  std::string path = spec;
  if (ctx.fs.IsDirectory(spec)) {
    path = spec + (spec.ends_with("/") ? "" : "/") + "config.json";
    if (!ctx.fs.Exists(path)) {
      return Status::BadInput({spec}, "directory has no config.json");
    }
  }
  EP_ASSIGN_OR_RETURN(std::string text, ReadInput(ctx, path));
  return ParseJsonDocument(text, path, ctx.limits);
}

StatusOr<Document> LoadOverridesDocument(Context& ctx, const std::string& path) {
  EP_ASSIGN_OR_RETURN(std::string text, ReadInput(ctx, path));
  if (path.ends_with(".yaml") || path.ends_with(".yml")) return ParseYamlDocument(text, path, ctx.limits);
  auto json = ParseJsonDocument(text, path, ctx.limits);
  if (json.ok() || path.ends_with(".json")) return json;
  return ParseYamlDocument(text, path, ctx.limits);
}

}  // namespace easyplan::cli
