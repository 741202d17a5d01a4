#ifndef EASYPLAN_CORE_FILE_SYSTEM_H_
#define EASYPLAN_CORE_FILE_SYSTEM_H_

// File access behind a small interface: RealFileSystem for the tool, MemFileSystem for tests.
// Library code takes a FileSystem& and never touches the disk directly.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"

namespace easyplan {

/// A whole file's bytes followed by at least the requested padding of readable bytes (of unspecified
/// value, for parsers that read ahead; the tree reader asks for none and uses it to map a large file
/// instead of copying it). Either owns a string or a read-only memory mapping, which it unmaps when
/// destroyed. Move-only.
class PaddedText {
 public:
  PaddedText() = default;
  /// Takes `contents` and grows its capacity to hold `padding` more bytes (one copy at most).
  PaddedText(std::string contents, size_t padding);
  /// Takes ownership of a mapping of `mapped_bytes` at `data` whose first `size` bytes are the text.
  static PaddedText FromMapping(const char* data, size_t size, size_t mapped_bytes);
  ~PaddedText();
  PaddedText(PaddedText&& other) noexcept;
  PaddedText& operator=(PaddedText&& other) noexcept;
  PaddedText(const PaddedText&) = delete;
  PaddedText& operator=(const PaddedText&) = delete;

  std::string_view text() const { return map_ ? std::string_view(map_, size_) : std::string_view(owned_); }
  /// Readable bytes from text().data(): text().size() plus the padding.
  size_t readable() const { return map_ ? map_bytes_ : owned_.capacity(); }

 private:
  void Unmap();
  std::string owned_;
  const char* map_ = nullptr;
  size_t size_ = 0;
  size_t map_bytes_ = 0;
};

/// A file written in full beside its destination, not yet in place (FileSystem::StageFile). Commit()
/// puts it there (a rename, so readers never see part of it); destroyed uncommitted, the temp file is
/// removed and the destination is as it was.
class StagedFile {
 public:
  virtual ~StagedFile() = default;
  /// Puts the file in place; at most once. Error (BadInput): "cannot write '<path>': <strerror>".
  virtual Status Commit() = 0;
};

/// Reading, listing and atomically writing files. Paths are used as given (relative paths are
/// relative to the working directory) and are quoted verbatim in error messages.
class FileSystem {
 public:
  /// Spare capacity RealFileSystem::ReadFile leaves after a regular file's contents.
  static constexpr size_t kReadSlack = 64;

  virtual ~FileSystem() = default;

  /// The whole file. Errors (BadInput, no location): "cannot read '<path>': <strerror>",
  /// "'<path>' is a directory", "'<path>' is larger than <max_bytes> bytes". RealFileSystem leaves at
  /// least kReadSlack bytes of spare capacity after a regular file's contents, so a parser that reads
  /// ahead needs no copy.
  virtual StatusOr<std::string> ReadFile(const std::string& path, size_t max_bytes) const = 0;

  /// ReadFile's bytes, errors and limit, followed by `padding` readable bytes. The default reads and
  /// copies; RealFileSystem maps a regular file instead (no copy, pages mapped up front), so a file
  /// truncated by another process while it is being parsed would fault (SIGBUS).
  virtual StatusOr<PaddedText> ReadFilePadded(const std::string& path, size_t max_bytes, size_t padding) const;

  /// The size in bytes of the file at `path`. Errors (BadInput, no location): "cannot read '<path>':
  /// <strerror>", "'<path>' is a directory", "'<path>' is not a regular file".
  virtual StatusOr<int64_t> FileSize(const std::string& path) const = 0;

  /// Exactly the `length` bytes at `offset`, and nothing else of the file: the size is checked before
  /// anything is allocated, so a length read from a corrupt file cannot make it allocate more than the
  /// file holds. Errors (BadInput, no location) are those of FileSize plus "cannot read bytes
  /// [<offset>, <end>) of '<path>': the file has only <size> bytes". A negative offset or length is a
  /// caller bug (Internal).
  virtual StatusOr<std::string> ReadFileRange(const std::string& path, int64_t offset, int64_t length) const = 0;

  /// True if `path` names an existing directory (following symlinks).
  virtual bool IsDirectory(const std::string& path) const = 0;

  /// True if `path` names an existing file or directory (following symlinks).
  virtual bool Exists(const std::string& path) const = 0;

  /// Sorted names (not paths) of the regular files directly inside `dir`; subdirectories are
  /// skipped. Error (BadInput): "cannot list '<dir>': <strerror>".
  virtual StatusOr<std::vector<std::string>> ListFiles(const std::string& dir) const = 0;

  /// The first step of an atomic write: `contents` written in full (and flushed) to a temp file in
  /// the destination's directory, which is checked (it exists, is writable, `path` is not a
  /// directory). Nothing at `path` changes until the result's Commit(). Error (BadInput): "cannot
  /// write '<path>': <strerror>".
  virtual StatusOr<std::unique_ptr<StagedFile>> StageFile(const std::string& path, std::string_view contents) = 0;

  /// StageFile, then Commit: readers see the old file or the whole new one, never a partial file. On
  /// failure the temp file is removed. Error (BadInput): "cannot write '<path>': <strerror>".
  Status WriteFileAtomically(const std::string& path, std::string_view contents);

  /// StageFile of every file of `files` ({path, contents}), in order: on a failure the ones already
  /// staged are removed and nothing at any path has changed. Two entries naming one path are refused
  /// (BadInput).
  StatusOr<std::vector<std::unique_ptr<StagedFile>>> StageFiles(
      const std::vector<std::pair<std::string, std::string_view>>& files);

  /// Writes every file of `files` or none: StageFiles, then each Commit, so a destination that cannot be
  /// written leaves every other one as it was (a failed command writes nothing, docs/RELIABILITY.md).
  Status WriteFilesAtomically(const std::vector<std::pair<std::string, std::string_view>>& files);
};

/// The operating system's file system (POSIX).
class RealFileSystem final : public FileSystem {
 public:
  StatusOr<std::string> ReadFile(const std::string& path, size_t max_bytes) const override;
  StatusOr<PaddedText> ReadFilePadded(const std::string& path, size_t max_bytes, size_t padding) const override;
  StatusOr<int64_t> FileSize(const std::string& path) const override;
  StatusOr<std::string> ReadFileRange(const std::string& path, int64_t offset, int64_t length) const override;
  bool IsDirectory(const std::string& path) const override;
  bool Exists(const std::string& path) const override;
  StatusOr<std::vector<std::string>> ListFiles(const std::string& dir) const override;
  /// The new file keeps the permission bits of the file it replaces; a new file gets 0666 minus
  /// the umask, as with an ordinary create. A symbolic link at `path` is followed, as editors do: the
  /// link stays, and the file it names (created if missing) is replaced atomically. A device or FIFO
  /// (-o /dev/null, /dev/stdout) is written in place at Commit.
  StatusOr<std::unique_ptr<StagedFile>> StageFile(const std::string& path, std::string_view contents) override;
};

/// An in-memory file system for tests. Paths are plain strings split at '/', without any
/// normalization ("a/./b" and "a/b" differ). A directory exists when it was added with
/// AddDirectory, when some file lies below it, or when it is "", "." or "/". Writing needs the
/// parent directory to exist. Not thread-safe.
class MemFileSystem final : public FileSystem {
 public:
  /// Adds or replaces a file.
  void AddFile(std::string path, std::string contents);
  /// Adds an (empty) directory.
  void AddDirectory(std::string path);

  StatusOr<std::string> ReadFile(const std::string& path, size_t max_bytes) const override;
  StatusOr<int64_t> FileSize(const std::string& path) const override;
  StatusOr<std::string> ReadFileRange(const std::string& path, int64_t offset, int64_t length) const override;
  bool IsDirectory(const std::string& path) const override;
  bool Exists(const std::string& path) const override;
  StatusOr<std::vector<std::string>> ListFiles(const std::string& dir) const override;
  StatusOr<std::unique_ptr<StagedFile>> StageFile(const std::string& path, std::string_view contents) override;

 private:
  std::map<std::string, std::string> files_;
  std::set<std::string> directories_;
};

}  // namespace easyplan

#endif  // EASYPLAN_CORE_FILE_SYSTEM_H_
