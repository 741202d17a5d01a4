#include "core/file_system.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <utility>

namespace easyplan {
namespace {

std::string ErrnoMessage(int error) { return std::generic_category().message(error); }

Status ReadError(const std::string& path, int error) {
  return Status::BadInput({}, "cannot read '" + path + "': " + ErrnoMessage(error));
}

Status TooLarge(const std::string& path, size_t max_bytes) {
  return Status::BadInput({}, "'" + path + "' is larger than " + std::to_string(max_bytes) + " bytes");
}

Status IsADirectory(const std::string& path) { return Status::BadInput({}, "'" + path + "' is a directory"); }

Status NotARegularFile(const std::string& path) { return Status::BadInput({}, "'" + path + "' is not a regular file"); }

/// The range [offset, offset + length) is not inside a file of `size` bytes.
Status RangeBeyondEnd(const std::string& path, int64_t offset, int64_t length, int64_t size) {
  // offset + length may overflow int64; the message only needs the exact end, so use unsigned math.
  const uint64_t end = static_cast<uint64_t>(offset) + static_cast<uint64_t>(length);
  return Status::BadInput({}, "cannot read bytes [" + std::to_string(offset) + ", " + std::to_string(end) + ") of '" +
                                  path + "': the file has only " + std::to_string(size) + " bytes");
}

/// A negative offset or length is a caller bug, not bad input.
Status CheckRangeArguments(const std::string& path, int64_t offset, int64_t length) {
  if (offset < 0 || length < 0) {
    return Status::Internal("ReadFileRange('" + path + "', " + std::to_string(offset) + ", " + std::to_string(length) +
                            "): negative offset or length");
  }
  return Status();
}

/// True when [offset, offset + length) lies inside a file of `size` bytes (all arguments >= 0).
bool RangeFits(int64_t offset, int64_t length, int64_t size) { return offset <= size && length <= size - offset; }

Status WriteError(const std::string& path, int error) {
  return Status::BadInput({}, "cannot write '" + path + "': " + ErrnoMessage(error));
}

Status ListError(const std::string& dir, int error) {
  return Status::BadInput({}, "cannot list '" + dir + "': " + ErrnoMessage(error));
}

/// Closes a file descriptor when it goes out of scope (unless released).
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  /// Closes now; returns 0 or the errno of close().
  int Close() {
    const int result = ::close(fd_);
    fd_ = -1;
    return result == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

/// Splits "a/b/c.json" into {"a/b", "c.json"}, "c.json" into {"", "c.json"}, "/c" into {"/", "c"}.
std::pair<std::string, std::string> SplitDirAndName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

/// A name for a temp file beside `path`, distinct per process, time and attempt.
std::string TempPathFor(const std::string& dir, const std::string& name, int attempt) {
  const auto ticks = std::chrono::steady_clock::now().time_since_epoch().count();
  char suffix[64];
  std::snprintf(suffix, sizeof(suffix), ".tmp-%ld-%llx-%d", static_cast<long>(::getpid()),
                static_cast<unsigned long long>(ticks), attempt);
  std::string prefix = dir.empty() ? "" : (dir == "/" ? "/" : dir + "/");
  return prefix + "." + name + suffix;
}

/// Writes all of `contents` to `fd`; returns 0 or errno.
int WriteAll(int fd, std::string_view contents) {
  while (!contents.empty()) {
    const ssize_t written = ::write(fd, contents.data(), contents.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    contents.remove_prefix(static_cast<size_t>(written));
  }
  return 0;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// FileSystem's writes, in terms of StageFile

Status FileSystem::WriteFileAtomically(const std::string& path, std::string_view contents) {
  EP_ASSIGN_OR_RETURN(std::unique_ptr<StagedFile> staged, StageFile(path, contents));
  return staged->Commit();
}

StatusOr<std::vector<std::unique_ptr<StagedFile>>> FileSystem::StageFiles(
    const std::vector<std::pair<std::string, std::string_view>>& files) {
  for (size_t i = 0; i < files.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (files[i].first == files[j].first) {
        return Status::BadInput({}, "cannot write '" + files[i].first + "' twice: two outputs name the same file");
      }
    }
  }
  // A failure here removes the staged ones (their destructors) and leaves every destination as it was.
  std::vector<std::unique_ptr<StagedFile>> staged;
  for (const auto& [path, contents] : files) {
    EP_ASSIGN_OR_RETURN(std::unique_ptr<StagedFile> file, StageFile(path, contents));
    staged.push_back(std::move(file));
  }
  return staged;
}

Status FileSystem::WriteFilesAtomically(const std::vector<std::pair<std::string, std::string_view>>& files) {
  EP_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<StagedFile>> staged, StageFiles(files));
  for (std::unique_ptr<StagedFile>& file : staged) EP_RETURN_IF_ERROR(file->Commit());
  return Status();
}

// ---------------------------------------------------------------------------------------------
// PaddedText and the default ReadFilePadded

PaddedText::PaddedText(std::string contents, size_t padding) : owned_(std::move(contents)) {
  if (owned_.capacity() - owned_.size() < padding) owned_.reserve(owned_.size() + padding);
}

PaddedText PaddedText::FromMapping(const char* data, size_t size, size_t mapped_bytes) {
  PaddedText text;
  text.map_ = data;
  text.size_ = size;
  text.map_bytes_ = mapped_bytes;
  return text;
}

PaddedText::~PaddedText() { Unmap(); }

PaddedText::PaddedText(PaddedText&& other) noexcept
    : owned_(std::move(other.owned_)),
      map_(std::exchange(other.map_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      map_bytes_(std::exchange(other.map_bytes_, 0)) {}

PaddedText& PaddedText::operator=(PaddedText&& other) noexcept {
  if (this != &other) {
    Unmap();
    owned_ = std::move(other.owned_);
    map_ = std::exchange(other.map_, nullptr);
    size_ = std::exchange(other.size_, 0);
    map_bytes_ = std::exchange(other.map_bytes_, 0);
  }
  return *this;
}

void PaddedText::Unmap() {
  if (map_ != nullptr) ::munmap(const_cast<char*>(map_), map_bytes_);
  map_ = nullptr;
}

StatusOr<PaddedText> FileSystem::ReadFilePadded(const std::string& path, size_t max_bytes, size_t padding) const {
  EP_ASSIGN_OR_RETURN(std::string contents, ReadFile(path, max_bytes));
  return PaddedText(std::move(contents), padding);
}

// ---------------------------------------------------------------------------------------------
// RealFileSystem

StatusOr<PaddedText> RealFileSystem::ReadFilePadded(const std::string& path, size_t max_bytes, size_t padding) const {
  struct stat info;
  // Anything but a non-empty regular file within the limit (and any error) takes ReadFile's path.
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_size <= 0 ||
      static_cast<uint64_t>(info.st_size) > max_bytes) {
    return FileSystem::ReadFilePadded(path, max_bytes, padding);
  }
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0 || ::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_size <= 0 ||
      static_cast<uint64_t>(info.st_size) > max_bytes) {
    return FileSystem::ReadFilePadded(path, max_bytes, padding);
  }
  const size_t size = static_cast<size_t>(info.st_size);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t mapped = (size + padding + page - 1) / page * page;
  // Reserve size + padding of readable zero pages, then map the file over their start: the padding
  // stays readable even when the file ends on a page boundary. MAP_POPULATE maps the page cache in one
  // go instead of one fault per page.
  void* region = ::mmap(nullptr, mapped, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) return FileSystem::ReadFilePadded(path, max_bytes, padding);
  if (::mmap(region, size, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, fd.get(), 0) == MAP_FAILED) {
    ::munmap(region, mapped);
    return FileSystem::ReadFilePadded(path, max_bytes, padding);
  }
  return PaddedText::FromMapping(static_cast<const char*>(region), size, mapped);
}

StatusOr<std::string> RealFileSystem::ReadFile(const std::string& path, size_t max_bytes) const {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return errno == EISDIR ? IsADirectory(path) : ReadError(path, errno);
  struct stat info;
  if (::fstat(fd.get(), &info) != 0) return ReadError(path, errno);
  if (S_ISDIR(info.st_mode)) return IsADirectory(path);
  if (S_ISREG(info.st_mode) && static_cast<uint64_t>(info.st_size) > max_bytes) {
    return TooLarge(path, max_bytes);
  }
  // Pipes and devices report no size, so read until EOF but never keep more than max_bytes.
  std::string contents;
  // One allocation for a regular file, with kReadSlack spare bytes for parsers that read ahead.
  if (S_ISREG(info.st_mode)) contents.reserve(static_cast<size_t>(info.st_size) + kReadSlack);
  char buffer[65536];
  while (true) {
    const ssize_t got = ::read(fd.get(), buffer, sizeof(buffer));
    if (got < 0) {
      if (errno == EINTR) continue;
      return ReadError(path, errno);
    }
    if (got == 0) break;
    if (contents.size() + static_cast<size_t>(got) > max_bytes) return TooLarge(path, max_bytes);
    contents.append(buffer, static_cast<size_t>(got));
  }
  return contents;
}

StatusOr<int64_t> RealFileSystem::FileSize(const std::string& path) const {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) return ReadError(path, errno);
  if (S_ISDIR(info.st_mode)) return IsADirectory(path);
  if (!S_ISREG(info.st_mode)) return NotARegularFile(path);
  return static_cast<int64_t>(info.st_size);
}

StatusOr<std::string> RealFileSystem::ReadFileRange(const std::string& path, int64_t offset, int64_t length) const {
  EP_RETURN_IF_ERROR(CheckRangeArguments(path, offset, length));
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return errno == EISDIR ? IsADirectory(path) : ReadError(path, errno);
  struct stat info;
  if (::fstat(fd.get(), &info) != 0) return ReadError(path, errno);
  if (S_ISDIR(info.st_mode)) return IsADirectory(path);
  if (!S_ISREG(info.st_mode)) return NotARegularFile(path);
  const int64_t size = static_cast<int64_t>(info.st_size);
  // Checked before allocating: a length taken from a corrupt file must not become a huge buffer.
  if (!RangeFits(offset, length, size)) return RangeBeyondEnd(path, offset, length, size);
  std::string contents(static_cast<size_t>(length), '\0');
  int64_t done = 0;
  while (done < length) {
    const ssize_t got = ::pread(fd.get(), contents.data() + done, static_cast<size_t>(length - done),
                                static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return ReadError(path, errno);
    }
    // The file shrank after fstat.
    if (got == 0) return RangeBeyondEnd(path, offset, length, offset + done);
    done += got;
  }
  return contents;
}

bool RealFileSystem::IsDirectory(const std::string& path) const {
  std::error_code error;
  return std::filesystem::is_directory(path, error);
}

bool RealFileSystem::Exists(const std::string& path) const {
  std::error_code error;
  return std::filesystem::exists(path, error);
}

StatusOr<std::vector<std::string>> RealFileSystem::ListFiles(const std::string& dir) const {
  std::error_code error;
  std::filesystem::directory_iterator it(dir, error);
  if (error) return ListError(dir, error.value());
  std::vector<std::string> names;
  for (; it != std::filesystem::directory_iterator(); it.increment(error)) {
    if (error) break;
    std::error_code type_error;
    if (it->is_regular_file(type_error)) names.push_back(it->path().filename().string());
  }
  if (error) return ListError(dir, error.value());
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

/// The file a write to `path` replaces: `path` itself, or, when it is a symbolic link, the file at the
/// end of its chain of links (a relative target is relative to the link's directory). Only the last
/// component is resolved; rename() resolves the directories. A loop is ELOOP, as open() says it.
StatusOr<std::string> FollowLinks(const std::string& path) {
  std::string current = path;
  for (int hops = 0; hops < 40; ++hops) {  // Linux's own limit on links followed in one lookup
    struct stat info;
    if (::lstat(current.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) return current;
    std::string target(static_cast<size_t>(info.st_size > 0 ? info.st_size : 4095) + 1, '\0');
    const ssize_t got = ::readlink(current.c_str(), target.data(), target.size());
    if (got < 0) return WriteError(path, errno);
    if (static_cast<size_t>(got) >= target.size()) return WriteError(path, ENAMETOOLONG);  // changed meanwhile
    target.resize(static_cast<size_t>(got));
    if (target.starts_with("/")) {
      current = target;
    } else {
      const std::string dir = SplitDirAndName(current).first;
      current = dir.empty() ? target : (dir == "/" ? "/" + target : dir + "/" + target);
    }
  }
  return WriteError(path, ELOOP);
}

/// A temp file beside the destination, renamed over it at Commit.
class StagedTemp final : public StagedFile {
 public:
  StagedTemp(std::string path, std::string destination, std::string temp)
      : path_(std::move(path)), destination_(std::move(destination)), temp_(std::move(temp)) {}
  ~StagedTemp() override {
    if (!temp_.empty()) ::unlink(temp_.c_str());
  }
  Status Commit() override {
    if (temp_.empty()) return Status::Internal("StagedFile::Commit of '" + path_ + "' twice");
    const std::string temp = std::move(temp_);
    temp_.clear();
    if (::rename(temp.c_str(), destination_.c_str()) != 0) {
      const int error = errno;
      ::unlink(temp.c_str());
      return WriteError(path_, error);
    }
    // Best effort: make the rename itself durable. The new file is already in place either way.
    const std::string dir = SplitDirAndName(destination_).first;
    ScopedFd dir_fd(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir_fd.get() >= 0) ::fsync(dir_fd.get());
    return Status();
  }

 private:
  std::string path_;         // as the user spelled it, for messages
  std::string destination_;  // the file replaced (a link's target)
  std::string temp_;         // "" once committed
};

/// A device or FIFO, written in place at Commit (the contents are kept until then).
class StagedInPlace final : public StagedFile {
 public:
  StagedInPlace(std::string path, std::string contents) : path_(std::move(path)), contents_(std::move(contents)) {}
  Status Commit() override {
    ScopedFd out(::open(path_.c_str(), O_WRONLY | O_CLOEXEC));
    if (out.get() < 0) return WriteError(path_, errno);
    if (const int error = WriteAll(out.get(), contents_); error != 0) return WriteError(path_, error);
    if (const int error = out.Close(); error != 0) return WriteError(path_, error);
    return Status();
  }

 private:
  std::string path_;
  std::string contents_;
};

}  // namespace

StatusOr<std::unique_ptr<StagedFile>> RealFileSystem::StageFile(const std::string& path, std::string_view contents) {
  if (SplitDirAndName(path).second.empty()) return WriteError(path, EISDIR);
  EP_ASSIGN_OR_RETURN(const std::string destination, FollowLinks(path));
  const auto [dir, name] = SplitDirAndName(destination);
  if (name.empty()) return WriteError(path, EISDIR);

  struct stat target;
  const bool exists = ::stat(destination.c_str(), &target) == 0;
  if (exists) {
    // A directory would only fail at the rename, after other outputs were committed: refused now.
    if (S_ISDIR(target.st_mode)) return WriteError(path, EISDIR);
    // Not a regular file (-o /dev/null, /dev/stdout, a FIFO): written in place at Commit. Renaming a
    // temporary over it would replace the device node itself when running as root (and fail
    // otherwise). Opening a FIFO would wait for its reader, so only the permission is checked here.
    if (!S_ISREG(target.st_mode)) {
      if (::access(destination.c_str(), W_OK) != 0) return WriteError(path, errno);
      return std::unique_ptr<StagedFile>(std::make_unique<StagedInPlace>(destination, std::string(contents)));
    }
  }

  std::string temp_path;
  int fd_number = -1;
  for (int attempt = 0; attempt < 100 && fd_number < 0; ++attempt) {
    temp_path = TempPathFor(dir, name, attempt);
    fd_number = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_number < 0 && errno != EEXIST) return WriteError(path, errno);
  }
  if (fd_number < 0) return WriteError(path, EEXIST);
  ScopedFd fd(fd_number);

  auto fail = [&](int error) {
    if (fd.get() >= 0) fd.Close();
    ::unlink(temp_path.c_str());
    return WriteError(path, error);
  };

  if (const int error = WriteAll(fd.get(), contents); error != 0) return fail(error);
  // The file replaced keeps its permission bits (a regular file: the others returned above).
  if (exists && ::fchmod(fd.get(), target.st_mode & 07777) != 0) return fail(errno);
  if (::fsync(fd.get()) != 0) return fail(errno);
  if (const int error = fd.Close(); error != 0) return fail(error);
  return std::unique_ptr<StagedFile>(std::make_unique<StagedTemp>(path, destination, temp_path));
}

// ---------------------------------------------------------------------------------------------
// MemFileSystem

void MemFileSystem::AddFile(std::string path, std::string contents) { files_[std::move(path)] = std::move(contents); }

void MemFileSystem::AddDirectory(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  directories_.insert(std::move(path));
}

StatusOr<std::string> MemFileSystem::ReadFile(const std::string& path, size_t max_bytes) const {
  const auto it = files_.find(path);
  if (it == files_.end()) {
    return IsDirectory(path) ? IsADirectory(path) : ReadError(path, ENOENT);
  }
  if (it->second.size() > max_bytes) return TooLarge(path, max_bytes);
  return it->second;
}

StatusOr<int64_t> MemFileSystem::FileSize(const std::string& path) const {
  const auto it = files_.find(path);
  if (it == files_.end()) {
    return IsDirectory(path) ? IsADirectory(path) : ReadError(path, ENOENT);
  }
  return static_cast<int64_t>(it->second.size());
}

StatusOr<std::string> MemFileSystem::ReadFileRange(const std::string& path, int64_t offset, int64_t length) const {
  EP_RETURN_IF_ERROR(CheckRangeArguments(path, offset, length));
  const auto it = files_.find(path);
  if (it == files_.end()) {
    return IsDirectory(path) ? IsADirectory(path) : ReadError(path, ENOENT);
  }
  const int64_t size = static_cast<int64_t>(it->second.size());
  if (!RangeFits(offset, length, size)) return RangeBeyondEnd(path, offset, length, size);
  return it->second.substr(static_cast<size_t>(offset), static_cast<size_t>(length));
}

bool MemFileSystem::IsDirectory(const std::string& path) const {
  std::string dir = path;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty() || dir == "." || dir == "/") return true;
  if (directories_.count(dir) > 0) return true;
  const std::string prefix = dir + "/";
  for (const std::string& known : directories_) {
    if (known.starts_with(prefix)) return true;
  }
  const auto it = files_.lower_bound(prefix);
  return it != files_.end() && it->first.starts_with(prefix);
}

bool MemFileSystem::Exists(const std::string& path) const { return files_.count(path) > 0 || IsDirectory(path); }

StatusOr<std::vector<std::string>> MemFileSystem::ListFiles(const std::string& dir) const {
  if (!IsDirectory(dir)) return ListError(dir, files_.count(dir) > 0 ? ENOTDIR : ENOENT);
  std::string prefix = dir;
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  if (prefix == ".") prefix.clear();
  if (!prefix.empty() && prefix != "/") prefix += "/";
  std::vector<std::string> names;
  for (const auto& [path, contents] : files_) {
    if (!path.starts_with(prefix)) continue;
    std::string rest = path.substr(prefix.size());
    if (!rest.empty() && rest.find('/') == std::string::npos) names.push_back(std::move(rest));
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

/// A MemFileSystem file, stored at Commit.
class StagedMem final : public StagedFile {
 public:
  StagedMem(std::map<std::string, std::string>& files, std::string path, std::string contents)
      : files_(files), path_(std::move(path)), contents_(std::move(contents)) {}
  Status Commit() override {
    files_[path_] = std::move(contents_);
    return Status();
  }

 private:
  std::map<std::string, std::string>& files_;
  std::string path_;
  std::string contents_;
};

}  // namespace

StatusOr<std::unique_ptr<StagedFile>> MemFileSystem::StageFile(const std::string& path, std::string_view contents) {
  const auto [dir, name] = SplitDirAndName(path);
  if (name.empty() || (files_.count(path) == 0 && IsDirectory(path))) {
    return WriteError(path, EISDIR);
  }
  if (files_.count(dir) > 0) return WriteError(path, ENOTDIR);
  if (!IsDirectory(dir)) return WriteError(path, ENOENT);
  return std::unique_ptr<StagedFile>(std::make_unique<StagedMem>(files_, path, std::string(contents)));
}

}  // namespace easyplan
