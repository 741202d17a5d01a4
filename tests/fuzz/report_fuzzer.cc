// Fuzzes the report's data model: `easyplan report` with fuzzed options (and, when the input has one, a
// fuzzed hardware profile) on a small bundled example (tests/fuzz/command_fuzz_util.h), the page built
// in memory: the plan's groups and tensor rows, with a step its memory, with --hardware its cost per
// layer, every figure through the non-finite guard, and the data written into the page's template.
//
// Properties beyond "no crash": every failure is bad input with a message (never exit 3). A page carries
// its data as one JSON object in the #easyplan-data element the page's script parses (with every key a
// page always has, and no "</" that would close the element early), no number in it is negative or not
// finite, the CLI writes exactly that page (to -o or stdout), and the exit code is the data's
// verdict: 1 exactly when the plan has errors or the step does not fit.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/command_fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace easyplan;
  using namespace easyplan::fuzz;
  const std::optional<CommandInput> input = ParseCommandInput(data, size);
  if (!input) return 0;
  Workspace::StartInput();
  const std::optional<CommandRun> run = RunInput("report", *input, [](Json& options) {
    if (!options.contains("max_devices")) options["max_devices"] = 64;  // bounded work per input
  });
  if (!run || !run->result) return 0;
  const std::string& page = std::get<api::ReportValue>(run->result->value).page;
  if (run->options.output.empty() || run->options.output == "-") {
    Check(run->out == page, "report printed something other than its page");
  } else {
    StatusOr<std::string> written = run->written->ReadFile(run->options.output, size_t{1} << 30);
    Check(written.ok() && *written == page, "report -o did not write its page");
  }
  Check(page.find("__EASYPLAN_DATA__") == std::string::npos, "the page still has the template's data marker");
  const Json report = ReportPageData(page);
  Check(FiniteAndNonNegative(report), "the page's data has a number that is negative or not finite");
  const Json& verdict = report.at("verdict");
  const int64_t errors = verdict.value("errors", int64_t{0});
  const bool fits = !verdict.contains("fits") || !verdict.at("fits").is_boolean() || verdict.at("fits").get<bool>();
  if ((errors > 0 || !fits) != (run->result->outcome == api::Outcome::kFindings)) {
    std::fprintf(stderr, "outcome %d, %lld errors, fits %d\n", static_cast<int>(run->result->outcome),
                 static_cast<long long>(errors), fits);
    Check(false, "the exit code is not the page's verdict");
  }
  return 0;
}
