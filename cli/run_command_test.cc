// ShowResult: the CLI writes what a command's CommandSpec::terminal shows, the same way for every
// command: stderr first (what was shown before a failure too), then the artifact and files all or none.
#include "cli/run_command.h"

#include <gtest/gtest.h>

#include <functional>
#include <sstream>
#include <string>

#include "core/file_system.h"

namespace easyplan::cli {
namespace {

struct ShowFixture {
  MemFileSystem fs;
  std::istringstream in;
  std::ostringstream out, err;
  Context ctx{fs, in, out, err, ""};
};

api::CommandSpec Showing(std::function<Status(api::TerminalOutput&)> show) {
  api::CommandSpec spec;
  spec.name = "fake";
  spec.terminal = [show](const api::CommandResult&, const api::CommandOptions&, api::TerminalOutput& shown) {
    return show(shown);
  };
  return spec;
}

TEST(ShowResultTest, FindingsThenNotesOnStderrThenTheArtifactAndItsFiles) {
  ShowFixture f;
  api::CommandOptions options;
  options.output = "t.txt";
  const api::CommandSpec spec = Showing([](api::TerminalOutput& shown) {
    shown.err = "warning: w\n";
    shown.notes.push_back(Diag{Severity::kNote, {}, "a note", {}});
    shown.out = "table\n";
    shown.files.push_back({"p.html", "--report", "page"});
    return Status();
  });
  ASSERT_TRUE(ShowResult(spec, {}, options, f.ctx).ok());
  EXPECT_EQ(f.err.str(), "warning: w\neasyplan: note: a note\n");
  EXPECT_EQ(f.out.str(), "");
  EXPECT_EQ(*f.fs.ReadFile("t.txt", 100), "table\n");
  EXPECT_EQ(*f.fs.ReadFile("p.html", 100), "page");
}

// A plan with errors has no export, a cost without an estimate no table: -o is not even created empty.
TEST(ShowResultTest, NoArtifactWritesNoFile) {
  ShowFixture f;
  api::CommandOptions options;
  options.output = "e.py";
  const api::CommandSpec spec = Showing([](api::TerminalOutput& shown) {
    shown.err = "error: e\n";
    return Status();
  });
  ASSERT_TRUE(ShowResult(spec, {}, options, f.ctx).ok());
  EXPECT_EQ(f.err.str(), "error: e\n");
  EXPECT_FALSE(f.fs.Exists("e.py"));
}

// activations prints its findings, then finds --hardware names nothing: both reach the user, in order.
TEST(ShowResultTest, WhatWasShownBeforeAFailureIsPrintedAndNothingIsWritten) {
  ShowFixture f;
  const api::CommandSpec spec = Showing([](api::TerminalOutput& shown) {
    shown.err = "warning: w\n";
    shown.out = "half a table";
    return Status::BadInput({}, "--hardware 'nope' is neither a hardware profile nor an accelerator");
  });
  const Status status = ShowResult(spec, {}, {}, f.ctx);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(f.err.str(), "warning: w\n");
  EXPECT_EQ(f.out.str(), "");
}

TEST(ShowResultTest, EveryCommandOfTheTableDeclaresWhatItShows) {
  for (const api::CommandSpec& spec : api::AllCommands()) EXPECT_TRUE(spec.terminal) << spec.name;
}

}  // namespace
}  // namespace easyplan::cli
