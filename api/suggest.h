#ifndef EASYPLAN_API_SUGGEST_H_
#define EASYPLAN_API_SUGGEST_H_

// `suggest`: which mesh, rules, checkpoint policy and gradient accumulation to run a model with on N
// chips (docs/COST.md). It enumerates every ordered factorization of N over the mesh axes
// (ep > 1 only for MoE models; with --slices K every placement of K's factors on the outer data axes
// dp and fsdp), rejects what EasyDeL would reject (heads, kv heads, experts, the expert mesh, batch or
// sequence not divisible by their axes, plan errors) and what does not fit at any microbatch count,
// prices the rest with `cost`'s model (api/cost.h) and ranks them by step time, then memory.
//
// Work grows with the candidates, not with candidates x tensors: the Model keeps one rule match per
// tree and rule set (planner::TreeMatches), each mesh lays it out once (planner::LayOutPlan works per
// layout group), and one dry run per mesh and microbatch size serves every checkpoint policy. The slice
// placements of a mesh (--slices) share its plan, its memory and its dry runs: only their links' prices
// differ (SearchTuning).

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/checked.h"
#include "api/cost.h"
#include "api/model.h"
#include "api/options.h"
#include "core/json.h"
#include "core/limits.h"
#include "planner/findings.h"

namespace easyplan::api {

struct SuggestOptions {
  /// CONFIG, --set, --uneven, and --devices (plan.config.devices: the chips in all, required); --mesh
  /// and --dcn are what suggest chooses.
  PlanOptions plan;
  MemoryOptions memory;  ///< mode, batch (global), seq, hardware (required), step state
  int64_t slices = 1;    ///< slow-network domains (TPU slices, GPU nodes): factors of dp x fsdp cross DCN
  int64_t top = 5;       ///< candidates shown
  int64_t max_microbatches = 64;
  /// Training: the most pipeline stages tried. 1, the default, searches no pipeline: EasyDeL, the runtime
  /// easyplan plans for, has no pipeline axis; for a runtime that pipelines (Megatron-LM, torchtitan,
  /// MaxText) give the most stages it should try.
  int64_t max_pp = 1;
  /// How each candidate is priced: precision and torus (every candidate's), and the retired decode;
  /// microbatches is searched (max_microbatches), so it stays 1.
  PricingOptions pricing;
  /// --mode decode: candidates whose time per output token (one decode step) exceeds this many
  /// milliseconds are dropped.
  std::optional<double> max_tpot_ms;
  std::vector<std::string> rules;  ///< --rules files tried besides the built-in rules
  /// Training: the pipeline schedules searched on meshes with a pp axis. Not given: 1f1b, and interleaved
  /// with 2 to 4 virtual stages, the two schedules Megatron-LM and torchtitan both run; given, that one
  /// (with --virtual-stages, that many virtual stages).
  std::optional<std::string> pp_schedule;
  std::optional<int64_t> virtual_stages;
};

Status CheckSuggestOptions(const SuggestOptions& options);
/// What Checked<SuggestOptions> runs (api/checked.h).
inline Status OptionChecks(const SuggestOptions& options) { return CheckSuggestOptions(options); }

/// --devices.
inline int64_t SuggestDevices(const SuggestOptions& options) { return options.plan.config.devices.value_or(0); }

struct Candidate {
  std::vector<std::string> axis_names;
  std::vector<int64_t> mesh;  ///< whole axis sizes (ICI x DCN)
  std::vector<int64_t> dcn;   ///< the factor of each axis that crosses the slow network (1 = none)
  std::string rules;          ///< "builtin" or the --rules file
  planner::CheckpointPolicy policy = planner::CheckpointPolicy::kNone;
  int64_t microbatches = 1;
  std::string pp_schedule;     ///< the pipeline's schedule when the mesh has pp > 1, else ""
  int64_t virtual_stages = 1;  ///< interleaved: model chunks per stage
  StepEstimate estimate;
  int64_t order = 0;             ///< position in the search's enumeration: the last tie-break of the ranking
  std::string MeshFlag() const;  ///< --mesh of the ICI part: "dp=1,fsdp=64,ep=1,tp=4,sp=1" (pp only above 1)
  int64_t Stages() const;        ///< the pp axis's size, 1 without one
  std::string DcnFlag() const;   ///< --dcn, "" when single-slice
};

/// One term of the step in which the winner and the runner-up differ.
struct TermDifference {
  std::string term;  ///< "compute", "recompute", "exposed communication", "memory"
  double winner = 0, runner_up = 0;
  std::string unit;  ///< "s" or "bytes"
};

struct SuggestResult {
  std::string model_type;
  std::string easydel_version;                      ///< the EasyDeL version every candidate describes
  const step::HardwareProfile* hardware = nullptr;  ///< --hardware, as loaded
  std::vector<Candidate> ranked;                    ///< every feasible candidate, best first
  int64_t considered = 0;                           ///< (mesh, slices placement, rules, policy) combinations examined
  std::map<std::string, int64_t> rejected;
  std::vector<size_t> pareto;                       ///< indices into ranked: memory against step time
  std::vector<TermDifference> winner_vs_runner_up;  ///< largest difference first
  /// Findings about the request itself, whatever the mesh (a --seq past the model's context): exit 1.
  std::vector<planner::Finding> findings;
  Limits limits;  ///< the environment's (core/limits.h): the reproduce commands repeat the raised ones
  /// The EasyDeL defaults every candidate was priced under (api/assumptions.h), as `cost` states them.
  std::vector<std::string> assumptions;
  /// Which of `assumptions` is the matmul line (step::MatmulEfficiencyAssumption, detailed): a terminal
  /// shows its one-line form unless --verbose, as `cost` does.
  size_t matmul_assumption = 0;
  /// That line in one line (no shape or tiles), as a terminal shows it without --verbose.
  std::string matmul_assumption_brief;
};

/// How Suggest searches: what it computes once and reuses. Every setting gives the same result (tests
/// compare them); only the time differs.
struct SearchTuning {
  /// The slice placements of one mesh (--slices) share its plan, its memory per policy and microbatch
  /// count and its dry runs: which axes cross the slow network changes only the prices of the links.
  /// False prices each placement from scratch.
  bool share = true;
};

StatusOr<SuggestResult> Suggest(const std::shared_ptr<const Model>& model, const Checked<SuggestOptions>& options,
                                const SearchTuning& tuning = {});
/// The same for options not checked yet: --devices, when not given, is the Model's own; then the options
/// are checked once (CheckSuggestOptions) and searched.
StatusOr<SuggestResult> Suggest(const std::shared_ptr<const Model>& model, const SuggestOptions& options,
                                const SearchTuning& tuning = {});

/// The commands that reproduce a candidate: plan, memory and cost, with every option of `options` that
/// changes a figure (the config options, --uneven, the step's state, --max-memory, --hardware,
/// --precision) and every limit of `limits` that is not its default, each word quoted for a POSIX shell.
/// `memory` prints the memory of one microbatch, `cost` the whole step.
std::vector<std::string> ReproduceCommands(const SuggestOptions& options, const Candidate& candidate,
                                           const Limits& limits = {});

/// `suggest --format json`: the top candidates and every Pareto one, ranked, with the search's counts.
Json SuggestToJson(const SuggestOptions& options, const SuggestResult& result);

}  // namespace easyplan::api

#endif  // EASYPLAN_API_SUGGEST_H_
