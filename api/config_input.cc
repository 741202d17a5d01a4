#include "api/config_input.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "core/json_parse.h"
#include "core/yaml_parse.h"

namespace easyplan::api {
StatusOr<std::string> ReadStdin(const Environment& env) {
  if (env.in == nullptr)
    return Status::BadInput({"<stdin>"}, "\"-\" reads standard input, which this caller has not given");
  // main() marks std::cin bad when descriptor 0 was closed (`easyplan resolve - <&-`).
  if (env.in->bad()) return Status::BadInput({"<stdin>"}, "cannot read standard input: it is closed");
  std::string text;
  char buffer[65536];
  while (env.in->read(buffer, sizeof(buffer)) || env.in->gcount() > 0) {
    text.append(buffer, static_cast<size_t>(env.in->gcount()));
    if (text.size() > env.limits.max_input_bytes) {
      return Status::BadInput({"<stdin>"},
                              "input is larger than " + std::to_string(env.limits.max_input_bytes) + " bytes",
                              {LimitNote("--max-input-bytes", env.limits.max_input_bytes)});
    }
  }
  // A read error (stdin is a directory, EIO) looks like end of input to the stream; stdio knows.
  if (env.in->bad() || (env.in == &std::cin && std::ferror(stdin))) {
    const int error = errno;
    return Status::BadInput({"<stdin>"}, "cannot read standard input" +
                                             (error != 0 ? ": " + std::string(std::strerror(error)) : std::string()));
  }
  return text;
}

namespace {

// Reads a file within the input size limit; the limit error says how to raise it.
StatusOr<std::string> ReadInput(const Environment& env, const std::string& path) {
  StatusOr<std::string> text = env.fs->ReadFile(path, env.limits.max_input_bytes);
  if (!text.ok() && text.status().diag().message.find("is larger than") != std::string::npos) {
    Status status = text.status();
    status.mutable_diag().notes.push_back(LimitNote("--max-input-bytes", env.limits.max_input_bytes));
    return status;
  }
  return text;
}

}  // namespace

StatusOr<Document> LoadConfigDocument(const Environment& env, const std::string& spec) {
  if (spec == "-") {
    EP_ASSIGN_OR_RETURN(std::string text, ReadStdin(env));
    return ParseJsonDocument(text, "<stdin>", env.limits);
  }
  std::string path = spec;
  if (env.fs->IsDirectory(spec)) {
    path = spec + (spec.ends_with("/") ? "" : "/") + "config.json";
    if (!env.fs->Exists(path)) {
      return Status::BadInput({spec}, "directory has no config.json");
    }
  }
  EP_ASSIGN_OR_RETURN(std::string text, ReadInput(env, path));
  return ParseJsonDocument(text, path, env.limits);
}

StatusOr<Document> LoadOverridesDocument(const Environment& env, const std::string& path) {
  EP_ASSIGN_OR_RETURN(std::string text, ReadInput(env, path));
  if (path.ends_with(".yaml") || path.ends_with(".yml")) return ParseYamlDocument(text, path, env.limits);
  auto json = ParseJsonDocument(text, path, env.limits);
  if (json.ok() || path.ends_with(".json")) return json;
  return ParseYamlDocument(text, path, env.limits);
}

}  // namespace easyplan::api
