#include "schemas/data_source.h"

#include "core/document_codec.h"
#include "core/yaml_parse.h"
#include "schemas/embedded_data.h"

namespace easyplan::schemas {
namespace {
constexpr size_t kMaxDataFileBytes = 16 << 20;

// Appends piecewise: `a + "/" + b` trips GCC 12's false -Wrestrict positive.
std::string JoinPath(const std::string& root, const std::string& path) {
  std::string joined = root;
  joined += '/';
  joined += path;
  return joined;
}
}  // namespace

DataSource DataSource::Embedded() { return DataSource("", nullptr); }

DataSource DataSource::Directory(std::string root, const FileSystem& fs) {
  if (root.empty()) root = ".";
  return DataSource(std::move(root), &fs);
}

StatusOr<std::string> DataSource::Read(const std::string& path) const {
  if (fs_ != nullptr) return fs_->ReadFile(DisplayPath(path), kMaxDataFileBytes);
  for (const EmbeddedFile& file : EmbeddedFiles()) {
    if (file.path == path) return std::string(file.contents);
  }
  return Status::BadInput({}, "no built-in data file '" + path + "'");
}

StatusOr<Document> DataSource::ReadDocument(const std::string& path) const {
  if (fs_ == nullptr) {
    for (const EmbeddedDocument& document : EmbeddedDocuments()) {
      if (document.path == path) return DecodeDocument(document.encoded, path);
    }
  }
  EP_ASSIGN_OR_RETURN(std::string text, Read(path));
  return ParseYamlDocument(text, DisplayPath(path));
}

std::vector<std::string> DataSource::List(const std::string& dir) const {
  std::vector<std::string> paths;
  if (fs_ != nullptr) {
    auto names = fs_->ListFiles(JoinPath(root_, dir));
    if (names.ok()) {
      for (const std::string& name : *names) paths.push_back(dir + "/" + name);
    }
    return paths;
  }
  std::string prefix = dir + "/";
  for (const EmbeddedFile& file : EmbeddedFiles()) {
    std::string_view path = file.path;
    if (path.starts_with(prefix) && path.substr(prefix.size()).find('/') == std::string_view::npos) {
      paths.emplace_back(path);
    }
  }
  return paths;
}

std::string DataSource::DisplayPath(const std::string& path) const {
  return fs_ == nullptr ? path : JoinPath(root_, path);
}

}  // namespace easyplan::schemas
