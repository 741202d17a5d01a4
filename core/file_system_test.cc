#include "core/file_system.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

namespace easyplan {
namespace {

namespace fs = std::filesystem;

/// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "easyplan_fs_test_XXXXXX").string();
    EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code error;
    fs::remove_all(path_, error);
  }
  std::string Path(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

  /// Every entry of the directory (files and directories, hidden ones included), sorted.
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(path_)) {
      names.push_back(entry.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::string path_;
};

void WriteRaw(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
}

std::string ReadRaw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// ---------------------------------------------------------------------------------------------
// RealFileSystem

TEST(RealFileSystemTest, ReadFileReturnsWholeContents) {
  TempDir dir;
  std::string big(200000, 'x');
  big += "end\n";
  WriteRaw(dir.Path("big.txt"), big);
  RealFileSystem real;
  StatusOr<std::string> contents = real.ReadFile(dir.Path("big.txt"), 1 << 20);
  ASSERT_TRUE(contents.ok()) << contents.status().ToString();
  EXPECT_EQ(*contents, big);
}

TEST(RealFileSystemTest, ReadFileOfMissingFileNamesPathAndReason) {
  TempDir dir;
  RealFileSystem real;
  const std::string path = dir.Path("missing.json");
  StatusOr<std::string> contents = real.ReadFile(path, 100);
  ASSERT_FALSE(contents.ok());
  EXPECT_EQ(contents.status().kind(), ErrorKind::kBadInput);
  EXPECT_EQ(contents.status().diag().message, "cannot read '" + path + "': No such file or directory");
}

TEST(RealFileSystemTest, ReadFileRejectsDirectory) {
  TempDir dir;
  RealFileSystem real;
  StatusOr<std::string> contents = real.ReadFile(dir.path(), 100);
  ASSERT_FALSE(contents.ok());
  EXPECT_EQ(contents.status().diag().message, "'" + dir.path() + "' is a directory");
}

TEST(RealFileSystemTest, ReadFileEnforcesMaxBytes) {
  TempDir dir;
  WriteRaw(dir.Path("f"), "12345");
  RealFileSystem real;
  EXPECT_TRUE(real.ReadFile(dir.Path("f"), 5).ok());
  StatusOr<std::string> contents = real.ReadFile(dir.Path("f"), 4);
  ASSERT_FALSE(contents.ok());
  EXPECT_EQ(contents.status().diag().message, "'" + dir.Path("f") + "' is larger than 4 bytes");
}

TEST(RealFileSystemTest, ReadFilePaddedMapsTheFileWithReadablePadding) {
  TempDir dir;
  RealFileSystem real;
  // A file ending exactly on a page boundary still has its padding after it.
  for (size_t size : {size_t{1}, size_t{4096}, size_t{200001}}) {
    std::string contents(size, 'x');
    contents.back() = 'y';
    WriteRaw(dir.Path("f"), contents);
    StatusOr<PaddedText> text = real.ReadFilePadded(dir.Path("f"), 1 << 20, 64);
    ASSERT_TRUE(text.ok()) << text.status().ToString();
    EXPECT_EQ(text->text(), contents);
    ASSERT_GE(text->readable(), size + 64);
    char last = 0;
    for (size_t i = 0; i < 64; ++i) last ^= text->text().data()[size + i];
    EXPECT_EQ(last, 0);  // readable (zeros past the end of the file)
    PaddedText moved = std::move(*text);
    EXPECT_EQ(moved.text(), contents);
  }
}

TEST(RealFileSystemTest, ReadFilePaddedHasReadFilesErrorsAndReadsEmptyFiles) {
  TempDir dir;
  RealFileSystem real;
  const std::string missing = dir.Path("missing.json");
  EXPECT_EQ(real.ReadFilePadded(missing, 100, 64).status().diag().message,
            real.ReadFile(missing, 100).status().diag().message);
  EXPECT_EQ(real.ReadFilePadded(dir.path(), 100, 64).status().diag().message, "'" + dir.path() + "' is a directory");
  WriteRaw(dir.Path("f"), "12345");
  EXPECT_EQ(real.ReadFilePadded(dir.Path("f"), 4, 64).status().diag().message,
            "'" + dir.Path("f") + "' is larger than 4 bytes");
  WriteRaw(dir.Path("empty"), "");
  StatusOr<PaddedText> empty = real.ReadFilePadded(dir.Path("empty"), 4, 64);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->text(), "");
  EXPECT_GE(empty->readable(), 64u);
}

TEST(RealFileSystemTest, ExistsAndIsDirectory) {
  TempDir dir;
  WriteRaw(dir.Path("f"), "x");
  RealFileSystem real;
  EXPECT_TRUE(real.Exists(dir.Path("f")));
  EXPECT_FALSE(real.IsDirectory(dir.Path("f")));
  EXPECT_TRUE(real.Exists(dir.path()));
  EXPECT_TRUE(real.IsDirectory(dir.path()));
  EXPECT_FALSE(real.Exists(dir.Path("nope")));
  EXPECT_FALSE(real.IsDirectory(dir.Path("nope")));
}

TEST(RealFileSystemTest, ListFilesReturnsSortedRegularFilesOnly) {
  TempDir dir;
  WriteRaw(dir.Path("b.yaml"), "");
  WriteRaw(dir.Path("a.yaml"), "");
  WriteRaw(dir.Path("C.yaml"), "");
  fs::create_directory(dir.Path("subdir"));
  RealFileSystem real;
  StatusOr<std::vector<std::string>> names = real.ListFiles(dir.path());
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_EQ(*names, (std::vector<std::string>{"C.yaml", "a.yaml", "b.yaml"}));
}

TEST(RealFileSystemTest, ListFilesOfMissingDirectoryFails) {
  TempDir dir;
  RealFileSystem real;
  StatusOr<std::vector<std::string>> names = real.ListFiles(dir.Path("nope"));
  ASSERT_FALSE(names.ok());
  EXPECT_EQ(names.status().diag().message, "cannot list '" + dir.Path("nope") + "': No such file or directory");
}

TEST(RealFileSystemTest, WriteFileAtomicallyCreatesCompleteFileAndNoTemp) {
  TempDir dir;
  RealFileSystem real;
  const std::string contents = std::string(300000, 'a') + "tail\n";
  ASSERT_TRUE(real.WriteFileAtomically(dir.Path("plan.json"), contents).ok());
  EXPECT_EQ(ReadRaw(dir.Path("plan.json")), contents);
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{"plan.json"});
}

TEST(RealFileSystemTest, WriteFileAtomicallyReplacesExistingFileAndKeepsItsMode) {
  TempDir dir;
  const std::string path = dir.Path("plan.json");
  WriteRaw(path, "old contents that are longer than the new ones\n");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  RealFileSystem real;
  ASSERT_TRUE(real.WriteFileAtomically(path, "new\n").ok());
  EXPECT_EQ(ReadRaw(path), "new\n");
  struct stat info;
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0640u);
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{"plan.json"});
}

// `-o /dev/null` used to rename a temporary over the device node, which (as root) turned /dev/null
// into a regular file for the whole machine.
TEST(RealFileSystemTest, WriteFileAtomicallyWritesDevicesInPlace) {
  RealFileSystem real;
  ASSERT_TRUE(real.WriteFileAtomically("/dev/null", "{}\n").ok());
  struct stat info;
  ASSERT_EQ(::stat("/dev/null", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
}

TEST(RealFileSystemTest, WriteFileAtomicallyWritesEmptyFile) {
  TempDir dir;
  RealFileSystem real;
  ASSERT_TRUE(real.WriteFileAtomically(dir.Path("empty"), "").ok());
  EXPECT_TRUE(fs::exists(dir.Path("empty")));
  EXPECT_EQ(fs::file_size(dir.Path("empty")), 0u);
}

TEST(RealFileSystemTest, WriteFileAtomicallyIntoMissingDirectoryFailsAndLeavesNothing) {
  TempDir dir;
  RealFileSystem real;
  const std::string path = dir.Path("missing/plan.json");
  Status status = real.WriteFileAtomically(path, "x");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.kind(), ErrorKind::kBadInput);
  EXPECT_EQ(status.diag().message, "cannot write '" + path + "': No such file or directory");
  EXPECT_TRUE(dir.Entries().empty());
}

TEST(RealFileSystemTest, WriteFileAtomicallyOverDirectoryFailsAndRemovesTemp) {
  TempDir dir;
  fs::create_directory(dir.Path("out"));
  RealFileSystem real;
  Status status = real.WriteFileAtomically(dir.Path("out"), "x");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.diag().message, "cannot write '" + dir.Path("out") + "': Is a directory");
  EXPECT_EQ(dir.Entries(), std::vector<std::string>{"out"});
  EXPECT_TRUE(fs::is_empty(dir.Path("out")));
}

// issue 44: `suggest -o BAD/s.json --report OK/s.html` wrote s.html, then failed on s.json.
TEST(RealFileSystemTest, WriteFilesAtomicallyWritesNoneWhenOneCannotBeWritten) {
  TempDir dir;
  WriteRaw(dir.Path("kept.html"), "old page\n");
  RealFileSystem real;
  const std::string bad = dir.Path("missing/s.json");
  // The good file first and last: neither order writes it.
  for (const auto& files :
       {std::vector<std::pair<std::string, std::string_view>>{
            {dir.Path("kept.html"), "new"}, {dir.Path("new.txt"), "x"}, {bad, "{}"}},
        std::vector<std::pair<std::string, std::string_view>>{{bad, "{}"}, {dir.Path("kept.html"), "new"}}}) {
    const Status status = real.WriteFilesAtomically(files);
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.diag().message, "cannot write '" + bad + "': No such file or directory");
    EXPECT_EQ(ReadRaw(dir.Path("kept.html")), "old page\n");
    EXPECT_EQ(dir.Entries(), std::vector<std::string>{"kept.html"});  // no new file, no temporary
  }
  // A directory in the way is found before anything is written, not at its rename.
  fs::create_directory(dir.Path("out"));
  EXPECT_FALSE(real.WriteFilesAtomically({{dir.Path("kept.html"), "new"}, {dir.Path("out"), "x"}}).ok());
  EXPECT_EQ(ReadRaw(dir.Path("kept.html")), "old page\n");
  ASSERT_TRUE(real.WriteFilesAtomically({{dir.Path("kept.html"), "new"}, {dir.Path("new.txt"), "x"}}).ok());
  EXPECT_EQ(ReadRaw(dir.Path("kept.html")), "new");
  EXPECT_EQ(ReadRaw(dir.Path("new.txt")), "x");
  EXPECT_FALSE(real.WriteFilesAtomically({{dir.Path("a"), "1"}, {dir.Path("a"), "2"}}).ok());
  EXPECT_FALSE(fs::exists(dir.Path("a")));
}

TEST(RealFileSystemTest, StagedFileIsRemovedUnlessCommitted) {
  TempDir dir;
  RealFileSystem real;
  {
    auto staged = real.StageFile(dir.Path("plan.json"), "{}");
    ASSERT_TRUE(staged.ok()) << staged.status().ToString();
    EXPECT_EQ(dir.Entries().size(), 1u);  // the temporary
  }
  EXPECT_TRUE(dir.Entries().empty());
}

// issue 44: `-o LINK` replaced the link with a file. It follows the link, as editors do.
TEST(RealFileSystemTest, WriteFileAtomicallyFollowsASymlinkToItsTarget) {
  TempDir dir;
  fs::create_directory(dir.Path("real"));
  WriteRaw(dir.Path("real/plan.json"), "old\n");
  ASSERT_EQ(::chmod(dir.Path("real/plan.json").c_str(), 0640), 0);
  fs::create_symlink("real/plan.json", dir.Path("link"));   // relative to the link's directory
  fs::create_symlink(dir.Path("link"), dir.Path("link2"));  // a chain, absolute
  RealFileSystem real;
  ASSERT_TRUE(real.WriteFileAtomically(dir.Path("link2"), "new\n").ok());
  EXPECT_TRUE(fs::is_symlink(dir.Path("link")));
  EXPECT_TRUE(fs::is_symlink(dir.Path("link2")));
  EXPECT_EQ(ReadRaw(dir.Path("real/plan.json")), "new\n");
  struct stat info;
  ASSERT_EQ(::stat(dir.Path("real/plan.json").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 07777, 0640u);
  EXPECT_EQ(dir.Entries(), (std::vector<std::string>{"link", "link2", "real"}));
  // A dangling link: its target is created.
  fs::create_symlink("made.json", dir.Path("dangling"));
  ASSERT_TRUE(real.WriteFileAtomically(dir.Path("dangling"), "made\n").ok());
  EXPECT_TRUE(fs::is_symlink(dir.Path("dangling")));
  EXPECT_EQ(ReadRaw(dir.Path("made.json")), "made\n");
  // A loop is an error naming the path given.
  fs::create_symlink("loop_b", dir.Path("loop_a"));
  fs::create_symlink("loop_a", dir.Path("loop_b"));
  const Status loop = real.WriteFileAtomically(dir.Path("loop_a"), "x");
  ASSERT_FALSE(loop.ok());
  EXPECT_EQ(loop.diag().message, "cannot write '" + dir.Path("loop_a") + "': Too many levels of symbolic links");
}

TEST(RealFileSystemTest, FileSizeReportsBytesWithoutReading) {
  TempDir dir;
  WriteRaw(dir.Path("f"), std::string(12345, 'z'));
  WriteRaw(dir.Path("empty"), "");
  RealFileSystem real;
  StatusOr<int64_t> size = real.FileSize(dir.Path("f"));
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  EXPECT_EQ(*size, 12345);
  EXPECT_EQ(*real.FileSize(dir.Path("empty")), 0);
}

TEST(RealFileSystemTest, FileSizeOfMissingFileOrDirectoryFails) {
  TempDir dir;
  RealFileSystem real;
  EXPECT_EQ(real.FileSize(dir.Path("nope")).status().diag().message,
            "cannot read '" + dir.Path("nope") + "': No such file or directory");
  EXPECT_EQ(real.FileSize(dir.path()).status().diag().message, "'" + dir.path() + "' is a directory");
}

TEST(RealFileSystemTest, ReadFileRangeReturnsExactlyTheRange) {
  TempDir dir;
  WriteRaw(dir.Path("f"), "0123456789");
  RealFileSystem real;
  StatusOr<std::string> middle = real.ReadFileRange(dir.Path("f"), 3, 4);
  ASSERT_TRUE(middle.ok()) << middle.status().ToString();
  EXPECT_EQ(*middle, "3456");
  EXPECT_EQ(*real.ReadFileRange(dir.Path("f"), 0, 10), "0123456789");
  EXPECT_EQ(*real.ReadFileRange(dir.Path("f"), 10, 0), "");
  EXPECT_EQ(*real.ReadFileRange(dir.Path("f"), 7, 3), "789");
}

TEST(RealFileSystemTest, ReadFileRangeOfLargeFileReadsAcrossChunks) {
  TempDir dir;
  std::string big(300000, 'a');
  big[150000] = 'X';
  big += "tail";
  WriteRaw(dir.Path("big"), big);
  RealFileSystem real;
  StatusOr<std::string> range = real.ReadFileRange(dir.Path("big"), 100000, 200004);
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  EXPECT_EQ(*range, big.substr(100000));
}

TEST(RealFileSystemTest, ReadFileRangeBeyondEndFailsBeforeAllocating) {
  TempDir dir;
  WriteRaw(dir.Path("f"), "0123456789");
  RealFileSystem real;
  const std::string path = dir.Path("f");
  EXPECT_EQ(real.ReadFileRange(path, 8, 3).status().diag().message,
            "cannot read bytes [8, 11) of '" + path + "': the file has only 10 bytes");
  EXPECT_EQ(real.ReadFileRange(path, 11, 0).status().diag().message,
            "cannot read bytes [11, 11) of '" + path + "': the file has only 10 bytes");
  // A length no machine could allocate is refused by the size check, not by the allocator.
  StatusOr<std::string> huge = real.ReadFileRange(path, 8, int64_t{1} << 62);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().kind(), ErrorKind::kBadInput);
  EXPECT_EQ(huge.status().diag().message,
            "cannot read bytes [8, 4611686018427387912) of '" + path + "': the file has only 10 bytes");
  const int64_t max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(
      real.ReadFileRange(path, max, max).status().diag().message,
      "cannot read bytes [9223372036854775807, 18446744073709551614) of '" + path + "': the file has only 10 bytes");
}

TEST(RealFileSystemTest, ReadFileRangeErrorsNameThePath) {
  TempDir dir;
  RealFileSystem real;
  EXPECT_EQ(real.ReadFileRange(dir.Path("nope"), 0, 1).status().diag().message,
            "cannot read '" + dir.Path("nope") + "': No such file or directory");
  EXPECT_EQ(real.ReadFileRange(dir.path(), 0, 1).status().diag().message, "'" + dir.path() + "' is a directory");
}

TEST(RealFileSystemTest, ReadFileRangeWithNegativeArgumentsIsAnInternalError) {
  TempDir dir;
  WriteRaw(dir.Path("f"), "0123456789");
  RealFileSystem real;
  EXPECT_EQ(real.ReadFileRange(dir.Path("f"), -1, 2).status().kind(), ErrorKind::kInternal);
  EXPECT_EQ(real.ReadFileRange(dir.Path("f"), 0, -2).status().kind(), ErrorKind::kInternal);
}

// ---------------------------------------------------------------------------------------------
// MemFileSystem

TEST(MemFileSystemTest, ReadsAddedFiles) {
  MemFileSystem mem;
  mem.AddFile("config.json", "{}");
  mem.AddFile("config.json", "{\"a\": 1}");
  StatusOr<std::string> contents = mem.ReadFile("config.json", 100);
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(*contents, "{\"a\": 1}");
}

TEST(MemFileSystemTest, ReadErrorsMatchRealFileSystem) {
  MemFileSystem mem;
  mem.AddFile("dir/f.yaml", "12345");
  EXPECT_EQ(mem.ReadFile("nope.json", 100).status().diag().message,
            "cannot read 'nope.json': No such file or directory");
  EXPECT_EQ(mem.ReadFile("dir", 100).status().diag().message, "'dir' is a directory");
  EXPECT_EQ(mem.ReadFile("dir/f.yaml", 4).status().diag().message, "'dir/f.yaml' is larger than 4 bytes");
  EXPECT_TRUE(mem.ReadFile("dir/f.yaml", 5).ok());
}

TEST(MemFileSystemTest, ReadFilePaddedCopiesWithSpareCapacity) {
  MemFileSystem mem;
  mem.AddFile("t.json", "{\"params\": []}");
  StatusOr<PaddedText> text = mem.ReadFilePadded("t.json", 100, 64);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->text(), "{\"params\": []}");
  EXPECT_GE(text->readable(), text->text().size() + 64);
  EXPECT_EQ(mem.ReadFilePadded("t.json", 4, 64).status().diag().message, "'t.json' is larger than 4 bytes");
}

TEST(MemFileSystemTest, DirectoriesAreImpliedByFilesOrAdded) {
  MemFileSystem mem;
  mem.AddFile("a/b/c.txt", "");
  mem.AddDirectory("empty/");
  EXPECT_TRUE(mem.IsDirectory("a"));
  EXPECT_TRUE(mem.IsDirectory("a/b"));
  EXPECT_TRUE(mem.IsDirectory("a/b/"));
  EXPECT_FALSE(mem.IsDirectory("a/b/c.txt"));
  EXPECT_FALSE(mem.IsDirectory("a/b/c"));
  EXPECT_TRUE(mem.IsDirectory("empty"));
  EXPECT_TRUE(mem.Exists("a/b/c.txt"));
  EXPECT_TRUE(mem.Exists("a"));
  EXPECT_FALSE(mem.Exists("a/x"));
}

TEST(MemFileSystemTest, ListFilesReturnsSortedDirectChildren) {
  MemFileSystem mem;
  mem.AddFile("rules/qwen2.yaml", "");
  mem.AddFile("rules/llama.yaml", "");
  mem.AddFile("rules/sub/deep.yaml", "");
  mem.AddFile("rulesx.yaml", "");
  mem.AddFile("top.yaml", "");
  StatusOr<std::vector<std::string>> names = mem.ListFiles("rules");
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"llama.yaml", "qwen2.yaml"}));
  StatusOr<std::vector<std::string>> top = mem.ListFiles(".");
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(*top, (std::vector<std::string>{"rulesx.yaml", "top.yaml"}));
  EXPECT_EQ(mem.ListFiles("nope").status().diag().message, "cannot list 'nope': No such file or directory");
  EXPECT_EQ(mem.ListFiles("top.yaml").status().diag().message, "cannot list 'top.yaml': Not a directory");
}

TEST(MemFileSystemTest, WriteFileAtomicallyStoresContents) {
  MemFileSystem mem;
  mem.AddDirectory("out");
  ASSERT_TRUE(mem.WriteFileAtomically("out/plan.json", "{}\n").ok());
  ASSERT_TRUE(mem.WriteFileAtomically("plan.yaml", "a: 1\n").ok());
  EXPECT_EQ(*mem.ReadFile("out/plan.json", 100), "{}\n");
  EXPECT_EQ(*mem.ReadFile("plan.yaml", 100), "a: 1\n");
}

TEST(MemFileSystemTest, WriteFileAtomicallyNeedsParentDirectory) {
  MemFileSystem mem;
  mem.AddFile("file", "");
  mem.AddDirectory("dir");
  EXPECT_EQ(mem.WriteFileAtomically("missing/plan.json", "x").diag().message,
            "cannot write 'missing/plan.json': No such file or directory");
  EXPECT_EQ(mem.WriteFileAtomically("file/plan.json", "x").diag().message,
            "cannot write 'file/plan.json': Not a directory");
  EXPECT_EQ(mem.WriteFileAtomically("dir", "x").diag().message, "cannot write 'dir': Is a directory");
  EXPECT_FALSE(mem.Exists("missing/plan.json"));
  EXPECT_TRUE(mem.WriteFileAtomically("dir/plan.json", "x").ok());
}

TEST(MemFileSystemTest, WriteFilesAtomicallyWritesNoneWhenOneCannotBeWritten) {
  MemFileSystem mem;
  mem.AddFile("kept.html", "old");
  EXPECT_FALSE(mem.WriteFilesAtomically({{"kept.html", "new"}, {"missing/s.json", "{}"}}).ok());
  EXPECT_EQ(*mem.ReadFile("kept.html", 100), "old");
  ASSERT_TRUE(mem.WriteFilesAtomically({{"kept.html", "new"}, {"s.json", "{}"}}).ok());
  EXPECT_EQ(*mem.ReadFile("kept.html", 100), "new");
  EXPECT_EQ(*mem.ReadFile("s.json", 100), "{}");
}

TEST(MemFileSystemTest, FileSizeAndReadFileRangeMatchRealFileSystem) {
  MemFileSystem mem;
  mem.AddFile("dir/f.bin", "0123456789");
  EXPECT_EQ(*mem.FileSize("dir/f.bin"), 10);
  EXPECT_EQ(*mem.ReadFileRange("dir/f.bin", 3, 4), "3456");
  EXPECT_EQ(*mem.ReadFileRange("dir/f.bin", 10, 0), "");
  EXPECT_EQ(mem.FileSize("nope").status().diag().message, "cannot read 'nope': No such file or directory");
  EXPECT_EQ(mem.FileSize("dir").status().diag().message, "'dir' is a directory");
  EXPECT_EQ(mem.ReadFileRange("nope", 0, 1).status().diag().message, "cannot read 'nope': No such file or directory");
  EXPECT_EQ(mem.ReadFileRange("dir", 0, 1).status().diag().message, "'dir' is a directory");
  EXPECT_EQ(mem.ReadFileRange("dir/f.bin", 8, 3).status().diag().message,
            "cannot read bytes [8, 11) of 'dir/f.bin': the file has only 10 bytes");
  EXPECT_EQ(mem.ReadFileRange("dir/f.bin", 8, int64_t{1} << 62).status().diag().message,
            "cannot read bytes [8, 4611686018427387912) of 'dir/f.bin': the file has only 10 bytes");
  EXPECT_EQ(mem.ReadFileRange("dir/f.bin", -1, 1).status().kind(), ErrorKind::kInternal);
}

}  // namespace
}  // namespace easyplan
