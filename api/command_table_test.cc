#include "api/command_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/enum_names.h"
#include "core/mode.h"
#include "planner/memory.h"

namespace easyplan::api {
namespace {

std::string MessageOf(const Status& status) { return status.ok() ? "ok" : status.diag().message; }

Status ApplyTo(const std::string& command, const Json& options, Surface caller = Surface::kPython) {
  CommandOptions out = DefaultOptions(command);
  return ApplyOptions(command, options, &out, caller);
}

TEST(CommandTableTest, EveryOptionPythonDoesNotTakeSaysWhy) {
  // Python parity (issue 46): a command's Python function takes every option its CLI command takes,
  // except those the table marks CLI-only, and each of those says why.
  for (const std::string& command : CommandNames()) {
    const StatusOr<std::vector<CommandOption>> options = OptionsOf(command);
    ASSERT_TRUE(options.ok());
    for (const CommandOption& option : *options) {
      if (option.surface == Surface::kCli) {
        EXPECT_FALSE(option.cli_only.empty()) << command << " " << option.Flag() << " is CLI-only without a reason";
      } else {
        EXPECT_TRUE(option.cli_only.empty()) << command << " " << option.Flag() << " is Python's too";
      }
    }
  }
}

TEST(CommandTableTest, EveryIdIsUniqueAndEveryReferenceResolves) {
  std::set<std::string_view> ids;
  for (const OptionSpec& option : AllOptions()) {
    EXPECT_TRUE(ids.insert(option.id).second) << option.id;
    EXPECT_NE(option.field, nullptr) << option.id;
    EXPECT_FALSE(option.help.empty()) << option.id;
  }
  const std::vector<std::string> names = CommandNames();
  const std::set<std::string> commands(names.begin(), names.end());
  for (const CommandSpec& command : AllCommands()) {
    EXPECT_TRUE(command.run && command.document) << command.name;
    for (std::string_view id : command.options) EXPECT_TRUE(ids.count(id)) << command.name << ": " << id;
    for (std::string_view name : command.python_positional) {
      bool found = false;
      const StatusOr<std::vector<std::string>> options = OptionNames(std::string(command.name));
      for (const std::string& option : *options) found = found || option == name;
      EXPECT_TRUE(found) << command.name << ": " << name;
    }
  }
  for (const OptionSpec& option : AllOptions()) {
    for (const OptionVariant& variant : option.variants) {
      for (std::string_view command : variant.commands) EXPECT_TRUE(commands.count(std::string(command))) << command;
    }
  }
  for (const RenamedOption& renamed : RenamedOptions()) {
    for (std::string_view command : renamed.commands) EXPECT_TRUE(commands.count(std::string(command))) << command;
  }
}

TEST(CommandTableTest, AnOptionNameMeansOneOptionInACommandForEachCaller) {
  for (std::string command : CommandNames()) {
    for (const Surface caller : {Surface::kCli, Surface::kPython}) {
      std::set<std::string_view> names;
      const StatusOr<std::vector<CommandOption>> options = OptionsOf(command);
      for (const CommandOption& option : *options) {
        if (option.surface != Surface::kBoth && option.surface != caller) continue;
        EXPECT_TRUE(names.insert(option.name()).second) << command << ": " << option.name();
      }
    }
  }
}

// A default is the pipelines' own: the table reads it from the field, so the CLI, Python and the C++
// option structs agree by construction.
TEST(CommandTableTest, DefaultsAreThePipelinesDefaults) {
  const CommandOptions plan = DefaultOptions("plan");
  EXPECT_EQ(plan.plan.uneven, PlanOptions().uneven);
  EXPECT_EQ(plan.plan.tree.max_tensors, PlanOptions().tree.max_tensors);
  EXPECT_EQ(plan.format, "table");
  EXPECT_EQ(DefaultOptions("memory").memory.mode, "train");
  EXPECT_EQ(DefaultOptions("report").memory.mode, "");
  EXPECT_EQ(DefaultOptions("validate").format, "text");
  EXPECT_EQ(DefaultOptions("resolve").format, "json");
  EXPECT_EQ(DefaultOptions("check").Check().level, CheckOptions().level);
  EXPECT_EQ(DefaultOptions("suggest").Suggest().top, SuggestOptions().top);
  // export: the layout follows --to unless given.
  EXPECT_FALSE(DefaultOptions("export").Export().layout_given);
  EXPECT_EQ(DefaultOptions("export").Export().plan.tree.layout, "easydel");
  const StatusOr<std::vector<CommandOption>> options = OptionsOf("plan");
  for (const CommandOption& option : *options) {
    if (option.name() == "max_tensors") {
      EXPECT_EQ(option.HelpText(), "refuse trees with more tensors than this (default 10000000)");
    }
  }
}

TEST(CommandTableTest, IntegersArePlainDecimal) {
  EXPECT_EQ(*ParseOptionText(OptionType::kInt, "010"), Json(10));
  EXPECT_EQ(*ParseOptionText(OptionType::kInt, "+8"), Json(8));
  EXPECT_EQ(CheckOptionText(OptionType::kInt, "0x10"), "expected a decimal integer, found '0x10'");
  EXPECT_EQ(CheckOptionText(OptionType::kInt, "9223372036854775808"),
            "'9223372036854775808' is out of range (at most 9223372036854775807)");
  // --seed, an unsigned option, follows the same rule (issue 36): no sign, no hex, no octal, in range.
  EXPECT_EQ(*ParseOptionText(OptionType::kUnsigned, "010"), Json(uint64_t{10}));
  EXPECT_EQ(CheckOptionText(OptionType::kUnsigned, "-1"), "expected a non-negative decimal integer, found '-1'");
  EXPECT_EQ(CheckOptionText(OptionType::kUnsigned, "0x10"), "expected a non-negative decimal integer, found '0x10'");
  EXPECT_EQ(CheckOptionText(OptionType::kUnsigned, "18446744073709551616"),
            "'18446744073709551616' is out of range (at most 18446744073709551615)");
  EXPECT_EQ(CheckOptionText(OptionType::kNumber, "1e400"), "expected a decimal number, found '1e400'");
  EXPECT_EQ(CheckOptionText(OptionType::kNumber, "nan"), "expected a decimal number, found 'nan'");
}

// Issue 36: every option is checked by its declaration, in every command, whatever the mode, and
// Python refuses what the CLI refuses.
TEST(CommandTableTest, EveryOptionIsCheckedByItsDeclarationInEveryCommand) {
  for (const char* command : {"memory", "cost", "suggest", "report", "validate", "activations"}) {
    EXPECT_EQ(MessageOf(ApplyTo(command, Json{{"batch", -1}})), "--batch must be at least 1, found -1") << command;
    EXPECT_EQ(MessageOf(ApplyTo(command, Json{{"seq", 0}})), "--seq must be at least 1, found 0") << command;
    EXPECT_NE(MessageOf(ApplyTo(command, Json{{"max_memory", "lots"}}, Surface::kCli)).find("--max-memory"),
              std::string::npos)
        << command;
  }
  EXPECT_EQ(MessageOf(ApplyTo("memory", Json{{"mode", ""}})), "--mode is empty: memory takes train, prefill or decode");
  EXPECT_EQ(MessageOf(ApplyTo("check", Json{{"seed", -1}})),
            "option seed: expected a non-negative integer, found number -1");
  EXPECT_EQ(MessageOf(ApplyTo("plan", Json{{"dtype", "bf17"}})), "--dtype 'bf17' is not a dtype name");
  EXPECT_EQ(MessageOf(ApplyTo("memory", Json{{"opt_state_dtype", ""}})),
            "--opt-state-dtype is empty: expected a dtype name");
  EXPECT_EQ(MessageOf(ApplyTo("cost", Json{{"decode", true}})).substr(0, 31), "--decode is now --mode decode: ");
  EXPECT_TRUE(ApplyTo("cost", Json{{"decode", false}}).ok());
}

TEST(CommandTableTest, TheCliOwnOptionsAreNotPythons) {
  EXPECT_NE(MessageOf(ApplyTo("plan", Json{{"format", "json"}})).find("unknown option 'format'"), std::string::npos);
  EXPECT_TRUE(ApplyTo("plan", Json{{"format", "json"}}, Surface::kCli).ok());
  EXPECT_TRUE(ApplyTo("export", Json{{"format", "json"}}).ok());  // export's --format is the artifact's
  EXPECT_TRUE(ApplyTo("report", Json{{"output", "page.html"}}).ok());
}

TEST(CommandTableTest, GivenOptionsAreRecorded) {
  CommandOptions options = DefaultOptions("cost");
  ASSERT_TRUE(ApplyOptions("cost", Json{{"mode", "train"}, {"batch", 8}}, &options).ok());
  EXPECT_TRUE(options.Given("mode"));
  EXPECT_FALSE(options.Given("seq"));
  EXPECT_EQ(options.memory.batch, 8);
}

TEST(CommandTableTest, TheTableAsJsonListsEveryCommandAndOption) {
  const Json table = CommandTableJson();
  ASSERT_EQ(table["commands"].size(), AllCommands().size());
  EXPECT_EQ(table["commands"][0]["name"], "resolve");
  bool provenance = false;
  for (const Json& option : table["commands"][0]["options"]) provenance = provenance || option["name"] == "provenance";
  EXPECT_TRUE(provenance);
  EXPECT_FALSE(table["model"].empty());
  EXPECT_FALSE(table["global"].empty());
}

// Issue 46: a choice list is its enum's names, and the help that lists them is written out from the list
// and the default, so neither is spelled twice.
TEST(CommandTableTest, ChoicesAndTheirHelpComeFromTheEnumsNameTable) {
  const auto option = [](std::string_view command, std::string_view name) {
    StatusOr<std::vector<CommandOption>> options = OptionsOf(command);
    EXPECT_TRUE(options.ok());
    for (const CommandOption& o : *options) {
      if (o.name() == name) return o;
    }
    ADD_FAILURE() << name;
    return CommandOption{};
  };
  const CommandOption optimizer = option("memory", "optimizer");
  ASSERT_EQ(optimizer.choices.size(), std::size(planner::kOptimizers));
  for (size_t i = 0; i < optimizer.choices.size(); ++i) {
    EXPECT_EQ(optimizer.choices[i], planner::OptimizerName(planner::kOptimizers[i]));
  }
  EXPECT_EQ(optimizer.help, "train: adamw (default), adafactor, lion or sgd");
  EXPECT_EQ(
      option("cost", "pp_schedule").help,
      "how the pp axis's stages run the microbatches: gpipe, 1f1b (default), interleaved, zero-bubble or dualpipe");
  EXPECT_EQ(option("activations", "mode").help, "runtime mode: train (default), prefill, decode or insert");
  EXPECT_EQ(option("memory", "mode").choices, EnumNames(kStepModes, ModeName));
}

}  // namespace
}  // namespace easyplan::api
