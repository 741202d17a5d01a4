#ifndef EASYPLAN_API_CHECK_H_
#define EASYPLAN_API_CHECK_H_

// `check`: proves a plan by executing it on simulated devices (kernels/): the layout check at full
// size, then the numeric check of a tiny model of the same family (derived from the family's
// numeric_check data by kernels/tiny_model.h) over the same mesh and rules, and with --memory the
// measured bytes against `easyplan memory`. docs/CHECK.md describes the report.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/model.h"
#include "api/options.h"
#include "api/plan_inputs.h"
#include "core/json.h"
#include "kernels/collectives.h"
#include "kernels/engine.h"
#include "kernels/layout_check.h"
#include "kernels/model.h"
#include "kernels/numeric_check.h"

namespace easyplan::api {

struct CheckOptions {
  PlanOptions plan;
  std::string level = "all";  ///< layout | numeric | all
  uint64_t seed = 0;
  std::string inject = "none";  ///< mutation tests only (docs/CHECK.md)
  int64_t max_numeric_devices = 64;
  bool memory = false;
  /// Where the numeric check's devices run: "in-process", or "mpi" under mpirun (kernels/mpi_engine.h).
  std::string engine = "in-process";
  double mpi_start_timeout_seconds = 60;  ///< MPI's start-up, until every rank starts (--mpi-start-timeout)
  double mpi_timeout_seconds = 60;        ///< every later MPI wait (--mpi-timeout)
};

/// The option checks that need no config: the plan's (CheckPlanOptions), --level, --inject, --engine,
/// --mpi-timeout, --mpi-start-timeout.
Status CheckCheckOptions(const CheckOptions& options);
/// What Checked<CheckOptions> runs (api/checked.h).
inline Status OptionChecks(const CheckOptions& options) { return CheckCheckOptions(options); }

/// The engine `options` asks for: in process, or MPI (which starts MPI here and must then be handed to
/// Check on every rank; destroying it ends MPI). BadInput for --engine mpi outside mpirun or in a
/// build without MPI.
StatusOr<std::unique_ptr<kernels::Engine>> StartEngine(const CheckOptions& options);

/// --inject's fault by name.
StatusOr<kernels::Injection> ParseInjection(const std::string& text);

/// The tiny model the numeric check runs and its plan.
struct NumericSetup {
  std::optional<PlanInputs> inputs;
  planner::Plan plan;
  kernels::ModelDesc model;
  std::vector<std::string> sets;
  std::string top_k_key;                 ///< kernels::TinyModel::top_k_key
  std::vector<std::string> differences;  ///< tensors whose tiny spec differs from the full plan's
};

/// The band a measured activation peak must fall in, as a fraction of the prediction (docs/MEMORY.md):
/// the model keeps every intermediate of one layer alive at once (above what liveness-based freeing
/// needs), while the reference frees by scope, so a layer's input and a fused projection's output can
/// outlive their last use (GPT-2's c_attn output beside its q, k and v).
constexpr double kPeakBandLow = 0.5, kPeakBandHigh = 1.5;

struct CheckRun {
  planner::Plan plan;  ///< the full plan; with error findings nothing else ran
  std::string level;
  std::string easydel_version;  ///< whose plan and forward ran (schemas/easydel_versions.yaml)
  Mesh mesh;
  std::optional<kernels::LayoutCheckResult> layout;
  std::optional<NumericSetup> numeric_setup;
  std::optional<kernels::NumericReport> numeric;
  /// --level all on a family without a reference forward pass: why the numeric check did not run (the
  /// layout check still did, and decides the outcome). Empty when it ran or was not asked for.
  std::string numeric_skipped;
  uint64_t seed = 0;
  bool root = true;  ///< false on an MPI rank other than 0, which prints nothing
  /// --memory: what the forward measured per device against `easyplan memory`'s prediction.
  struct MemoryRow {
    std::string what;  ///< "params", "residual stream", "logits"
    int64_t device = 0;
    int64_t measured = 0, predicted = 0;
  };
  std::optional<std::vector<MemoryRow>> memory;  ///< every mismatch; devices agreeing are summarised
  int64_t memory_compared = 0;
  /// Peak live activations per device: measured through the last layer, and `easyplan memory`'s
  /// activations for the computation the reference runs (vanilla attention, every expert on every token).
  struct ActivationPeak {
    std::vector<int64_t> measured, predicted;
    double min_ratio = 0, max_ratio = 0;
    int64_t worst_device = 0;  ///< the device furthest from the prediction
    bool ok = true;
  };
  std::optional<ActivationPeak> activation_peak;
  bool memory_ok() const { return (!memory || memory->empty()) && (!activation_peak || activation_peak->ok); }
  bool ok() const { return (!layout || layout->ok()) && (!numeric || numeric->ok()) && memory_ok(); }
};

/// Runs the check. A plan with error findings is returned unexecuted (run.plan has them). `engine`
/// (nullptr: in process) runs the numeric check; on a distributed engine every process calls this, the
/// layout check and the memory comparison run on the root, and only the root's run holds the report.
StatusOr<CheckRun> Check(const std::shared_ptr<const Model>& model, const Checked<CheckOptions>& options,
                         kernels::Engine* engine = nullptr);
/// The same for options not checked yet: checked once (CheckCheckOptions), then run.
StatusOr<CheckRun> Check(const std::shared_ptr<const Model>& model, const CheckOptions& options,
                         kernels::Engine* engine = nullptr);

/// "llama: 2 layers, hidden 64, ...": the tiny model in one line.
std::string DescribeModel(const kernels::ModelDesc& model);

/// `check --format json`.
Json CheckToJson(const CheckRun& run);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_CHECK_H_
