// Fuzzes pricing a step: `easyplan cost` with fuzzed options and a fuzzed hardware profile
// (tests/fuzz/command_fuzz_util.h: the input's command-line words and profile) on a small bundled
// example: the options as the CLI reads and checks them, the config, the plan, the memory, the dry run,
// the step-time model, the JSON (--format json) and the table.
//
// Properties beyond "no crash": every failure is bad input with a message (never exit 3). A priced step
// has a positive step time, and every figure of its JSON is finite and at least 0; its exit code (1) is
// a plan error or a step that does not fit. Priced again at twice the batch, its step time does not
// decrease (issue 36 item 6: "finite, non-negative, step time non-decreasing as the batch grows").
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/emit.h"
#include "tests/fuzz/command_fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace easyplan;
  using namespace easyplan::fuzz;
  const std::optional<CommandInput> input = ParseCommandInput(data, size);
  if (!input) return 0;
  Workspace::StartInput();
  // At most 64 devices: the dry run's work grows with them.
  auto bounded = [](Json& options) {
    if (!options.contains("max_devices")) options["max_devices"] = 64;
  };
  const std::optional<CommandRun> run = RunInput("cost", *input, bounded);
  if (!run || !run->result) return 0;
  const api::CostResult& cost = std::get<api::CostResult>(run->result->value);
  if (!cost.estimate) {  // a plan with errors its step model cannot price: the findings answer, exit 1
    Check(cost.plan.HasErrors() && run->result->outcome == api::Outcome::kFindings,
          "a step left unpriced without a plan error");
    return 0;
  }
  const api::StepEstimate& estimate = *cost.estimate;
  const bool failed = !estimate.fits || cost.plan.HasErrors();
  Check(failed == (run->result->outcome == api::Outcome::kFindings), "cost's exit code is not its verdict");
  const std::optional<Json> json = ParseOutputJson(EmitJson(api::CostToJson(cost)));
  Check(json.has_value(), "cost's JSON does not parse");
  Check(FiniteAndNonNegative(*json), "a priced step with a figure that is negative or not finite");
  const double step = estimate.step.step_time_s;
  Check(step > 0, "a priced step without a positive step time");

  // Twice the batch: every microbatch grows, so the step may not get faster.
  const int64_t batch = run->options.memory.batch.value_or(0);
  if (batch <= 0 || batch > (int64_t{1} << 40)) return 0;
  const std::optional<CommandRun> bigger = RunInput("cost", *input, [&](Json& options) {
    bounded(options);
    options["batch"] = 2 * batch;
  });
  if (!bigger || !bigger->result) return 0;  // e.g. a shape past int64
  const api::CostResult& bigger_cost = std::get<api::CostResult>(bigger->result->value);
  if (!bigger_cost.estimate) return 0;
  const double bigger_step = bigger_cost.estimate->step.step_time_s;
  if (!(bigger_step >= step * (1 - 1e-9))) {
    std::fprintf(stderr, "batch %lld: %.17g s; batch %lld: %.17g s\n", static_cast<long long>(batch), step,
                 static_cast<long long>(2 * batch), bigger_step);
    Check(false, "the step time decreased when the batch doubled");
  }
  return 0;
}
