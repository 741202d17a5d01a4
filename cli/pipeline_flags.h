#ifndef EASYPLAN_CLI_PIPELINE_FLAGS_H_
#define EASYPLAN_CLI_PIPELINE_FLAGS_H_

// The flags of the planning commands, bound to the api's option structs (api/options.h): the plan
// flags (plan, explain, validate, memory, export, check), the runtime-mode flags (activations,
// validate --mode) and the step's memory flags (memory, validate --max-memory).

#include <CLI/CLI.hpp>

#include "api/options.h"
#include "api/plan_inputs.h"
#include "cli/config_flags.h"
#include "cli/context.h"

namespace easyplan::cli {

/// Registers CONFIG, the resolve flags and the plan flags on `cmd`.
void AddPlanFlags(CLI::App* cmd, api::PlanOptions& flags);

/// Registers --mode, --batch, --seq (all commands) and, when `full`, --layout, --qkv-mni,
/// --softmax-aux-ndim, --dtype, --kernel, --cache, --page-size, --num-pages and --cache-version
/// (`activations`).
void AddActivationFlags(CLI::App* cmd, api::ActivationOptions& flags, bool full);

/// --mode, --batch, --seq, the step state, --max-memory and --hardware (memory, cost, suggest, report).
/// `mode_defaults_to_train`: --mode is train unless given (memory, cost, suggest); else "" means no
/// step (report). Returns the --mode option, whose count() says whether it was given.
CLI::Option* AddMemoryFlags(CLI::App* cmd, api::MemoryOptions& flags, bool mode_defaults_to_train);

/// Registers what the step holds besides the model: --max-length, --optimizer, --grad-dtype,
/// --opt-state-dtype and --master-weights (validate's whole-memory budget takes them too).
void AddStepStateFlags(CLI::App* cmd, api::MemoryOptions& flags);

/// --hardware NAME|FILE: the accelerator, one flag in every command that has one.
void AddHardwareFlag(CLI::App* cmd, std::string& hardware);

/// A flag an earlier easyplan had: hidden, and an error naming `new_name` when given.
void AddRenamedFlag(CLI::App* cmd, const std::string& old_name, const std::string& new_name);

/// --precision (cost, suggest): the projections' matmul precision.
void AddPrecisionFlag(CLI::App* cmd, std::string& precision);

/// --microbatches, --decode and --precision (cost, report): how a step is priced.
void AddStepPricingFlags(CLI::App* cmd, int64_t& microbatches, bool& decode, std::string& precision);

}  // namespace easyplan::cli

#endif  // EASYPLAN_CLI_PIPELINE_FLAGS_H_
