#ifndef EASYPLAN_SCHEMAS_DATA_SOURCE_H_
#define EASYPLAN_SCHEMAS_DATA_SOURCE_H_

#include <string>
#include <vector>

#include "core/document.h"
#include "core/file_system.h"
#include "core/status.h"

namespace easyplan::schemas {

/// Where schema and rule files come from: the copies embedded at build time, or a directory on disk
/// (`--schemas-dir`, for editing a family without rebuilding). Paths are repo-relative:
/// "schemas/families/llama.yaml".
class DataSource {
 public:
  /// The embedded files.
  static DataSource Embedded();
  /// Files under `root` (a checkout's top directory, holding schemas/ and rules/), read through `fs`.
  static DataSource Directory(std::string root, const FileSystem& fs);

  /// Contents of one file; BadInput naming the path when missing.
  StatusOr<std::string> Read(const std::string& path) const;
  /// One YAML file parsed, named by DisplayPath(path): for embedded files the document the build
  /// parsed (decoded, not parsed again), otherwise ParseYamlDocument of Read(path).
  StatusOr<Document> ReadDocument(const std::string& path) const;
  /// Sorted repo-relative paths of the files directly under `dir` ("schemas/families").
  std::vector<std::string> List(const std::string& dir) const;
  /// The path as messages show it: the repo-relative path for embedded files, the disk path otherwise.
  std::string DisplayPath(const std::string& path) const;

 private:
  DataSource(std::string root, const FileSystem* fs) : root_(std::move(root)), fs_(fs) {}

  std::string root_;                // "" for embedded
  const FileSystem* fs_ = nullptr;  // null for embedded
};

}  // namespace easyplan::schemas

#endif  // EASYPLAN_SCHEMAS_DATA_SOURCE_H_
