// Fuzzes suggest's search: `easyplan suggest` with fuzzed options (and, when the input has one, a fuzzed
// hardware profile) on a small bundled example (tests/fuzz/command_fuzz_util.h). --devices is at most 16
// and --max-microbatches at most 8, so a search is a few dozen candidates.
//
// Properties beyond "no crash": every failure is bad input with a message (never exit 3). Every candidate
// reproduces (issue 36 item 6): for the first two ranked, the `memory` and `cost` commands suggest prints
// (api::ReproduceCommands), read back as the CLI reads them and run, give the candidate's memory of the
// worst device, its microbatch count, step time and MFU. A page written with --report carries the
// report's data. A search that ranks nothing ends in exit 1, one that ranks something in exit 0.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/fuzz/command_fuzz_util.h"

namespace {

using easyplan::Json;
using easyplan::fuzz::Check;

bool Near(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)) + 1e-15; }

// Runs a printed reproduce command (`easyplan COMMAND CONFIG FLAG...`, the layer limit among the flags).
easyplan::api::CommandResult RunPrinted(const std::string& line, const std::string& command) {
  std::vector<std::string> words = easyplan::fuzz::ShellWords(line);
  Check(words.size() >= 3 && words[0] == "easyplan" && words[1] == command, "a reproduce command of another form");
  const std::string config = words[2];
  std::vector<std::string> flags;
  for (size_t i = 3; i < words.size(); ++i) {
    if (words[i] == "--max-layers" && i + 1 < words.size() && words[i + 1] == "4") {
      ++i;  // the environment's own limit, a global flag
      continue;
    }
    flags.push_back(words[i]);
  }
  const std::optional<Json> options = easyplan::fuzz::OptionsFromWords(command, flags);
  if (!options) std::fprintf(stderr, "%s\n", line.c_str());
  Check(options.has_value(), "the CLI would refuse a printed reproduce command's words");
  easyplan::fuzz::CommandRun run = easyplan::fuzz::RunCommand(command, config, *options, {});
  if (!run.result) std::fprintf(stderr, "%s\n%s\n", line.c_str(), run.status.ToString().c_str());
  Check(run.result.has_value(), "a printed reproduce command is refused");
  return std::move(*run.result);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace easyplan;
  using namespace easyplan::fuzz;
  const std::optional<CommandInput> input = ParseCommandInput(data, size);
  if (!input) return 0;
  // Small searches only: the candidates grow with the device count's factorizations and the microbatch
  // counts tried.
  const std::optional<int64_t> devices = DecimalValue(FlagValue(input->words, "--devices"));
  if (!devices || *devices > 16) return 0;
  if (const std::optional<std::string> micro = FlagValue(input->words, "--max-microbatches")) {
    const std::optional<int64_t> count = DecimalValue(micro);
    if (!count || *count > 8) return 0;
  }
  Workspace::StartInput();
  const std::optional<CommandRun> run = RunInput("suggest", *input);
  if (!run || !run->result) return 0;
  const api::SuggestValue& value = std::get<api::SuggestValue>(run->result->value);
  Check(value.result.ranked.empty() == (run->result->outcome == api::Outcome::kFindings),
        "suggest's exit code is not whether anything was ranked");
  if (value.page) ReportPageData(*value.page);
  for (size_t i = 0; i < value.result.ranked.size() && i < 2; ++i) {
    const api::Candidate& candidate = value.result.ranked[i];
    const std::vector<std::string> commands = api::ReproduceCommands(value.options, candidate, value.result.limits);
    Check(commands.size() == 3, "a candidate without its plan, memory and cost commands");

    const api::CommandResult memory = RunPrinted(commands[1], "memory");
    const api::MemoryResult& memory_result = std::get<api::MemoryResult>(memory.value);
    Check(memory_result.report.has_value() &&
              memory_result.report->Worst().total == candidate.estimate.memory.Worst().total,
          "the printed memory command gives another worst-device total than the candidate");

    const api::CommandResult cost = RunPrinted(commands[2], "cost");
    const api::CostResult& cost_result = std::get<api::CostResult>(cost.value);
    Check(cost_result.estimate.has_value(), "the printed cost command does not price the candidate");
    Check(cost_result.settings.microbatches == candidate.microbatches,
          "the printed cost command runs another microbatch count than the candidate");
    Check(cost_result.estimate->memory.Worst().total == candidate.estimate.memory.Worst().total,
          "the printed cost command gives another memory total than the candidate");
    const double step = candidate.estimate.step.step_time_s;
    const double reproduced = cost_result.estimate->step.step_time_s;
    if (!Near(step, reproduced) || !Near(candidate.estimate.mfu, cost_result.estimate->mfu)) {
      std::fprintf(stderr, "%s\ncandidate %.17g s (MFU %.17g), reproduced %.17g s (MFU %.17g)\n", commands[2].c_str(),
                   step, candidate.estimate.mfu, reproduced, cost_result.estimate->mfu);
      Check(false, "the printed cost command gives another step time or MFU than the candidate");
    }
  }
  return 0;
}
