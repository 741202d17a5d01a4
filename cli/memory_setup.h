#ifndef EASYPLAN_CLI_MEMORY_SETUP_H_
#define EASYPLAN_CLI_MEMORY_SETUP_H_

// The flags `memory` and `validate --mode train|serve` share, and turning a plan and its inputs into a
// memory report (planner/memory.h): the activation plans of the step and of the KV cache, the model's
// dims, the checkpointing policy of the config and the device budget.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cli/context.h"
#include "cli/plan_setup.h"
#include "planner/memory.h"
#include "planner/plan.h"

namespace easyplan::cli {

struct MemoryFlags {
  std::string mode;  ///< train or serve
  std::optional<int64_t> batch;
  std::optional<int64_t> seq;
  std::optional<int64_t> max_length;  ///< serve: the KV cache length (default --seq)
  std::string optimizer = "adamw";
  std::string grad_dtype;  ///< "" = each parameter's dtype
  std::string opt_state_dtype = "float32";
  bool master_weights = false;
  std::string memory_per_device;  ///< "" = the device's, else 80GiB
  std::string device;             ///< a name of schemas/devices.yaml
  std::string activation_dtype;   ///< "" = the config's torch_dtype, else bfloat16 (check --memory sets it)
};

/// Registers --batch, --seq, --memory-per-device, --device and the step flags below (`mode_flag`: also
/// --mode).
void AddMemoryFlags(CLI::App* cmd, MemoryFlags& flags, bool mode_flag);

/// Registers what the step holds besides the model: --max-length, --optimizer, --grad-dtype,
/// --opt-state-dtype and --master-weights (validate's whole-memory budget takes them too).
void AddStepStateFlags(CLI::App* cmd, MemoryFlags& flags);

/// True when a flag of AddStepStateFlags differs from its default.
bool HasStepStateFlags(const MemoryFlags& flags);

/// The flag checks that need no config. `budget_flag` names the flag the budget came from in messages.
Status CheckMemoryFlags(const MemoryFlags& flags);

/// The budget of --memory-per-device, else of --device, else 80GiB; `label` receives how to show it
/// ("80GiB", "h100-80g (80.0 GiB)").
StatusOr<int64_t> MemoryBudget(Context& ctx, const MemoryFlags& flags, const std::string& schemas_dir,
                               std::string* label);

/// The memory report of `plan` (built from `inputs`) for the flags. REQUIRES: CheckMemoryFlags passed.
StatusOr<planner::MemoryReport> BuildMemoryReport(Context& ctx, const PlanInputs& inputs, const planner::Plan& plan,
                                                  const MemoryFlags& flags, int64_t budget,
                                                  const std::string& schemas_dir);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_MEMORY_SETUP_H_
