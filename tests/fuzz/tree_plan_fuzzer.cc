// Fuzzes a `--tree` JSON all the way into the plan, as `plan --tree`, `validate --tree` and
// `check --tree --level layout` use it, with extreme shapes and dtypes: the element and byte overflow
// space (issue 44 item 2: a [2^62, 1] float64 tensor planned as "0 B per device", an int8 [2^62, 2] one
// exited 3). tree_json fuzzes the reader alone; this target plans what it accepts.
//
// The input is the tree JSON. It is read by the reader every tree JSON goes through (core/tree_json.h
// ParseTreeJson, as LoadUserTree and the Python module read it) and handed to the commands as the
// caller's tree, which enters through Model::Tree like a --tree file, on a mesh picked by the input's
// length (so a mutation can change it), with a rule file that shards kernels, embeddings, biases and
// experts over fsdp, tp and ep.
//
// Properties beyond "no crash": every failure is bad input (never exit 3). A tree whose bytes or
// elements overflow int64 is refused by every command. A planned tree's per-device and per-stage bytes
// lie between 0 and the tree's total bytes; validate's summary agrees; the layout check of a plan the
// planner built finds nothing wrong, and check's JSON figures are finite and at least 0.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "api/check.h"
#include "api/command_table.h"
#include "api/environment.h"
#include "api/model.h"
#include "api/plan_pipeline.h"
#include "api/validate.h"
#include "cli/context.h"
#include "cli/run_command.h"
#include "core/emit.h"
#include "core/file_system.h"
#include "core/tree_json.h"
#include "tests/fuzz/command_fuzz_util.h"

namespace easyplan::fuzz {
namespace {

constexpr int64_t kMaxTensors = 2000;

constexpr std::string_view kRules = R"(layout: easydel
rules:
  - {match: "embed", spec: [[fsdp, tp], null]}
  - {match: "expert", spec: [ep, fsdp, tp]}
  - {match: "kernel", spec: [fsdp, tp]}
  - {match: "bias|scale", spec: [tp]}
  - {match: ".*", spec: Replicated}
)";

// Small meshes: the layout check's work grows with the devices. One splits unevenly (tp=3), one has a
// pipeline.
constexpr const char* kMeshes[] = {"fsdp=2,tp=4", "dp=2,fsdp=2,ep=2", "tp=3", "fsdp=8", "pp=2,tp=2"};

struct Setup {
  std::shared_ptr<MemFileSystem> files = std::make_shared<MemFileSystem>();
  std::shared_ptr<const api::Model> model;
};

const Setup& GetSetup() {
  static const Setup* setup = [] {
    auto* s = new Setup();
    s->files->AddFile("rules.yaml", std::string(kRules));
    api::Environment env;
    env.fs = s->files;
    env.warn = [](const Diag&) {};
    StatusOr<std::shared_ptr<const api::Model>> model = api::Model::Load(env, api::ConfigSource::None(), {});
    Check(model.ok(), "the config-less model does not load");
    s->model = *model;
    return s;
  }();
  return *setup;
}

/// `command` on `tree` as the CLI runs it (options applied and checked, the pipeline, what it shows:
/// cli::ShowResult): the result, or nullopt after checking that the failure is bad input.
std::optional<api::CommandResult> Run(const std::string& command, Json options,
                                      const std::shared_ptr<const ParamTree>& tree) {
  StatusOr<const api::CommandSpec*> spec = api::FindCommand(command);
  Check(spec.ok(), "a fuzzed command the table does not have");
  api::CommandOptions parsed = api::DefaultOptions(command);
  Status applied = api::ApplyOptions(command, options, &parsed, api::Surface::kCli);
  Check(applied.ok(), "the target's own options are refused");
  parsed.plan.tree.given = tree;
  StatusOr<api::CheckedCommand> checked = api::CheckCommandOptions(**spec, parsed);
  if (!checked.ok()) {
    CheckBadInput(checked.status());
    return std::nullopt;
  }
  StatusOr<api::CommandResult> result = api::RunCommand(**spec, {GetSetup().model, nullptr}, *checked);
  if (!result.ok()) {
    CheckBadInput(result.status());
    return std::nullopt;
  }
  MemFileSystem written;
  std::istringstream in;
  std::ostringstream out, err;
  cli::Context ctx{written, in, out, err, ""};
  CheckBadInput(cli::ShowResult(**spec, *result, parsed, ctx));
  return std::move(*result);
}

bool InRange(int64_t bytes, int64_t total) { return bytes >= 0 && bytes <= total; }

}  // namespace
}  // namespace easyplan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace easyplan;
  using namespace easyplan::fuzz;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Limits limits;
  limits.max_values = 100000;
  StatusOr<ParamTree> read = ParseTreeJson(text, "tree.json", limits, kMaxTensors);
  CheckBadInput(read.status());
  if (!read.ok()) return 0;
  const auto tree = std::make_shared<const ParamTree>(std::move(*read));
  const StatusOr<TreeTotals> totals = tree->Totals();
  const std::string mesh = kMeshes[size % std::size(kMeshes)];
  Json options = {{"rules", "rules.yaml"}, {"mesh", mesh}};

  const std::optional<api::CommandResult> plan = Run("plan", options, tree);
  Check(!plan || totals.ok(), "plan accepted a tree whose bytes overflow int64");
  if (plan) {
    const planner::Plan& built = std::get<std::shared_ptr<const api::PlanResult>>(plan->value)->plan;
    for (int64_t bytes : built.device_bytes) {
      Check(InRange(bytes, totals->bytes), "a device holds fewer than 0 or more than the tree's bytes");
    }
    for (int64_t bytes : built.StageBytes()) {
      Check(InRange(bytes, totals->bytes), "a stage holds fewer than 0 or more than the tree's bytes");
    }
  }

  Json validate_options = options;
  validate_options["max_memory"] = "16GiB";
  const std::optional<api::CommandResult> validate = Run("validate", validate_options, tree);
  Check(!validate || totals.ok(), "validate accepted a tree whose bytes overflow int64");
  if (validate) {
    const api::ValidateResult& result = std::get<api::ValidateResult>(validate->value);
    Check(InRange(result.summary.min, totals->bytes) && InRange(result.summary.max, totals->bytes) &&
              result.summary.min <= result.summary.max,
          "validate's bytes per device are out of range");
    if (result.budget && result.summary.max > *result.budget) {
      Check(result.failed, "validate passed a plan over its memory budget");
    }
  }

  Json check_options = options;
  check_options["level"] = "layout";
  const std::optional<api::CommandResult> check = Run("check", check_options, tree);
  Check(!check || totals.ok(), "check accepted a tree whose bytes overflow int64");
  if (check) {
    const api::CheckRun& run = std::get<api::CheckRun>(check->value);
    if (!run.plan.HasErrors() && run.layout) {
      Check(run.layout->ok(), "the layout check found errors in a plan the planner built");
    }
    const std::optional<Json> json = ParseOutputJson(EmitJson(api::CheckToJson(run)));
    Check(json.has_value(), "check's JSON does not parse");
    Check(FiniteAndNonNegative(*json), "check's JSON has a figure that is negative or not finite");
  }
  return 0;
}
