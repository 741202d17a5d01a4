// WriteOutputs: a command's outputs are written all or none (issue 44; docs/RELIABILITY.md, "Output
// safety").
#include "cli/context.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "core/file_system.h"

namespace easyplan::cli {
namespace {

struct Fixture {
  MemFileSystem fs;
  std::istringstream in;
  std::ostringstream out, err;
  Context ctx{fs, in, out, err, ""};
};

TEST(WriteOutputsTest, AnOutputThatCannotBeWrittenLeavesTheOthersUnwritten) {
  Fixture f;
  f.fs.AddDirectory("ok");
  f.fs.AddFile("ok/s.html", "old page");
  const Status status = WriteOutputs(f.ctx, {{"bad/s.json", "-o", "{}"}, {"ok/s.html", "--report", "new page"}});
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.diag().message, "cannot write 'bad/s.json': No such file or directory");
  EXPECT_EQ(*f.fs.ReadFile("ok/s.html", 100), "old page");
  // Nor is stdout written when a file cannot be.
  EXPECT_FALSE(WriteOutputs(f.ctx, {{"", "-o", "table"}, {"bad/s.html", "--report", "page"}}).ok());
  EXPECT_EQ(f.out.str(), "");
}

TEST(WriteOutputsTest, WritesEveryOutputWhenAllCan) {
  Fixture f;
  f.fs.AddDirectory("ok");
  ASSERT_TRUE(WriteOutputs(f.ctx, {{"-", "-o", "table\n"}, {"ok/s.html", "--report", "page"}}).ok());
  EXPECT_EQ(f.out.str(), "table\n");
  EXPECT_EQ(*f.fs.ReadFile("ok/s.html", 100), "page");
}

TEST(WriteOutputsTest, TwoOutputsNamingOneDestinationAreRefused) {
  Fixture f;
  const Status file = WriteOutputs(f.ctx, {{"s.json", "-o", "{}"}, {"s.json", "--report", "page"}});
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.diag().message, "-o and --report both name 's.json': give each output its own file");
  EXPECT_FALSE(f.fs.Exists("s.json"));
  const Status out = WriteOutputs(f.ctx, {{"", "-o", "table"}, {"-", "--report", "page"}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.diag().message, "-o and --report both name standard output: give each output its own file");
  EXPECT_EQ(f.out.str(), "");
}

}  // namespace
}  // namespace easyplan::cli
