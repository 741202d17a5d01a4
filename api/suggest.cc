#include "api/suggest.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>

#include "api/assumptions.h"
#include "api/command_options.h"
#include "api/command_table.h"
#include "api/context_length.h"
#include "api/findings_json.h"
#include "api/forward_model.h"
#include "api/memory_pipeline.h"
#include "api/option_checks.h"
#include "api/pipeline_inputs.h"
#include "api/plan_inputs.h"
#include "api/plan_json.h"
#include "planner/expert_mesh.h"
#include "planner/findings.h"
#include "planner/pipeline.h"
#include "schemas/model_dims.h"
#include "step/matmul_tiling.h"
#include "step/torus.h"

namespace easyplan::api {
namespace {

// The policies suggest tries in training, each distinct in memory or compute (everything_saveable is
// EasyDeL's default of saving every intermediate, the same as none; the name-based policies need a
// list of names and mlp/attn_notsaveable are not in the memory model, docs/COST.md).
constexpr planner::CheckpointPolicy kPolicies[] = {
    planner::CheckpointPolicy::kNone, planner::CheckpointPolicy::kCheckpointDots,
    planner::CheckpointPolicy::kDotsNoBatchDims, planner::CheckpointPolicy::kNothingSaveable};

// Every way to write n as an ordered product of `slots` factors, with the slots in `fixed_one` kept at 1.
void Factorizations(int64_t n, size_t slots, const std::vector<bool>& fixed_one, std::vector<int64_t>& current,
                    std::vector<std::vector<int64_t>>& out) {
  const size_t k = current.size();
  if (k + 1 == slots) {
    if (fixed_one[k] && n != 1) return;
    current.push_back(n);
    out.push_back(current);
    current.pop_back();
    return;
  }
  for (int64_t f = 1; f <= n; ++f) {
    if (n % f != 0) continue;
    if (fixed_one[k] && f != 1) break;
    current.push_back(f);
    Factorizations(n / f, slots, fixed_one, current, out);
    current.pop_back();
  }
}

int64_t Tiles(const std::vector<std::string>& names, const std::vector<int64_t>& sizes,
              const std::vector<std::string>& entry) {
  int64_t tiles = 1;
  for (const std::string& axis : entry) {
    auto it = std::find(names.begin(), names.end(), axis);
    if (it != names.end()) tiles *= sizes[static_cast<size_t>(it - names.begin())];
  }
  return tiles;
}

std::string AxisFlag(const std::vector<std::string>& names, const std::vector<int64_t>& sizes) {
  std::string out;
  for (size_t k = 0; k < names.size(); ++k) out += fmt::format("{}{}={}", k == 0 ? "" : ",", names[k], sizes[k]);
  return out;
}

int64_t WorstTotal(const Candidate& c) { return c.estimate.memory.Worst().total; }

// The attention kernels that walk the sequence in blocks of blocksize_q queries and blocksize_k keys,
// each block min(blocksize, sequence length) (easydel/layers/attention_operator/modules/*: flash,
// ring, blockwise, blocksparse). Inside shard_map each device holds seq / sp tokens, and the blocked
// reshape (or the Pallas kernel's `seq_len % block` check, jax/experimental/pallas/ops/tpu/
// flash_attention.py) fails unless the device's tokens are whole blocks.
struct AttentionBlocks {
  bool blocked = false;
  int64_t q = 0, k = 0;

  static AttentionBlocks Of(const Json& config) {
    static constexpr const char* kBlocked[] = {"flash_attn2", "ring", "blockwise", "blocksparse"};
    AttentionBlocks blocks;
    const std::string mechanism = config.value("attn_mechanism", std::string());
    blocks.blocked = std::find(std::begin(kBlocked), std::end(kBlocked), mechanism) != std::end(kBlocked);
    blocks.q = config.value("blocksize_q", int64_t{0});
    blocks.k = config.value("blocksize_k", int64_t{0});
    return blocks;
  }

  // Why `seq` split `tiles` ways is not whole blocks; "" when it is.
  std::string Rejection(int64_t seq, int64_t tiles) const {
    if (!blocked || tiles < 1) return "";
    const int64_t local = seq / tiles;
    for (int64_t size : {q, k}) {
      const int64_t block = std::min(size, seq);
      if (block > 0 && local % block != 0) return "sequence per device not a whole number of attention blocks";
    }
    return "";
  }
};

}  // namespace

std::string Candidate::MeshFlag() const {
  std::vector<std::string> names;
  std::vector<int64_t> ici;
  for (size_t k = 0; k < mesh.size(); ++k) {
    if (axis_names[k] == planner::kPipelineAxis && mesh[k] == 1) continue;  // no pipeline: the config's axes
    names.push_back(axis_names[k]);
    ici.push_back(mesh[k] / dcn[k]);
  }
  return AxisFlag(names, ici);
}

int64_t Candidate::Stages() const {
  for (size_t k = 0; k < mesh.size(); ++k) {
    if (axis_names[k] == planner::kPipelineAxis) return mesh[k];
  }
  return 1;
}

std::string Candidate::DcnFlag() const {
  if (std::all_of(dcn.begin(), dcn.end(), [](int64_t f) { return f == 1; })) return "";
  std::vector<std::string> names;
  std::vector<int64_t> sizes;
  for (size_t k = 0; k < dcn.size(); ++k) {
    if (dcn[k] > 1) {
      names.push_back(axis_names[k]);
      sizes.push_back(dcn[k]);
    }
  }
  return AxisFlag(names, sizes);
}

Status CheckSuggestOptions(const SuggestOptions& options) {
  if (options.memory.hardware.empty()) {
    return Status::BadInput({}, "--hardware is required: candidates are ranked by their step time on it",
                            {"e.g. --hardware tpu-v5p, --hardware h100-sxm, or a profile file (docs/COST.md)"});
  }
  if (SuggestDevices(options) < 1) {
    return Status::BadInput({}, "--devices is required: the chips to lay the model out on", {"e.g. --devices 256"});
  }
  if (SuggestDevices(options) > options.plan.mesh.max_devices) {
    return Status::BadInput({}, fmt::format("--devices {} is more than --max-devices {}", SuggestDevices(options),
                                            options.plan.mesh.max_devices));
  }
  if (options.slices < 1 || SuggestDevices(options) % options.slices != 0) {
    return Status::BadInput(
        {}, fmt::format("--slices {} does not divide --devices {}", options.slices, SuggestDevices(options)),
        {"each slice (or node) holds devices / slices chips"});
  }
  EP_RETURN_IF_ERROR(CheckOptionValue("top", Json(options.top)));
  EP_RETURN_IF_ERROR(CheckOptionValue("max_microbatches", Json(options.max_microbatches)));
  EP_RETURN_IF_ERROR(CheckOptionValue("max_pp", Json(options.max_pp)));
  if (options.max_pp > 1 && options.memory.mode != "train") {
    // An option the call cannot honour is an error: a serving search tries no pipeline.
    return Status::BadInput(
        {}, fmt::format("--max-pp {} searches pipelines for training steps: it needs --mode train", options.max_pp),
        {kServingWithPipeline});
  }
  if (options.max_tpot_ms) {
    EP_RETURN_IF_ERROR(CheckOptionValue("max_tpot", Json(*options.max_tpot_ms)));
    if (options.memory.mode != "decode") {
      return Status::BadInput({}, "--max-tpot bounds the time per output token: it needs --mode decode",
                              {"e.g. --mode decode --batch 1 --seq 4096 --max-tpot 20"});
    }
  }
  if (options.plan.pipeline.schedule != PipelineOptions().schedule ||
      options.plan.pipeline.virtual_stages != PipelineOptions().virtual_stages) {
    return Status::BadInput({},
                            "suggest: the pipeline schedule is SuggestOptions::pp_schedule and virtual_stages, not "
                            "its plan's pipeline group",
                            {"--pp-schedule and --virtual-stages choose the schedule of the pipelined candidates"});
  }
  if (!options.plan.pipeline.layers.empty()) {
    return Status::BadInput({}, "suggest chooses the pipeline's stages: --pp-layers does not apply",
                            {"suggest tries stage counts that divide the layers evenly; `cost --pp-layers` prices a "
                             "split of your own"});
  }
  if (options.virtual_stages && options.pp_schedule.value_or("interleaved") != "interleaved" &&
      options.pp_schedule != "gpipe") {
    return Status::BadInput({}, "--virtual-stages needs --pp-schedule interleaved or gpipe (the circular pipeline)",
                            {"--pp-schedule " + options.pp_schedule.value_or("") + " runs one chunk per stage"});
  }
  if ((options.pp_schedule || options.virtual_stages) && options.memory.mode != "train") {
    return Status::BadInput({}, "the pipeline options choose a training schedule: they need --mode train",
                            {kServingWithPipeline});
  }
  if (!options.plan.mesh.axes.empty() || !options.plan.mesh.dcn.empty()) {
    return Status::BadInput({}, "suggest chooses the mesh: --mesh and --dcn do not apply",
                            {"use --slices K for K slices or nodes; `cost --mesh ...` prices one mesh"});
  }
  // The step's own checks (the memory options and the pricing group) are cost's.
  CostOptions cost;
  cost.plan = options.plan;
  cost.memory = options.memory;
  cost.pricing = options.pricing;
  return CheckCostOptions(cost, "suggest");
}

namespace {

// --torus, parsed; CheckSuggestOptions has refused a bad one before a search starts.
std::vector<int64_t> TorusOf(const SuggestOptions& options) {
  StatusOr<std::vector<int64_t>> torus = ParseTorus(options.pricing.torus);
  return torus.ok() ? *torus : std::vector<int64_t>{};
}

// One worker's share of the search: the meshes are independent, so each worker takes every
// `workers`-th one into its own Partial, and Suggest merges them into one ranking.
struct Partial {
  std::vector<Candidate> ranked;
  std::map<std::string, int64_t> rejected;
  int64_t considered = 0;
  std::vector<std::optional<StepModel>> step_models;    ///< per rule set, from its first plan
  std::shared_ptr<const PipelineRoles> pipeline_roles;  ///< from the first pipelined plan (one tree)
  Status status;
  void Reject(const std::string& reason, int64_t count) { rejected[reason] += count; }
};

// What one search reads, fixed before it starts. Const, so workers share it (a Model is safe to share
// between threads).
class Search {
 public:
  Search(std::shared_ptr<const Model> model, const Checked<SuggestOptions>& checked, schemas::ModelDims dims,
         const step::HardwareProfile& hardware, int64_t budget, const SearchTuning& tuning)
      : model_(std::move(model)),
        options_(*checked),
        plan_(checked.PartOf(&SuggestOptions::plan)),
        dims_(std::move(dims)),
        hardware_(hardware),
        budget_(budget),
        parallel_(planner::ParallelAxisNamesOf(model_->config())),
        binding_(planner::ExpertBindingOf(model_->config())),
        train_(options_.memory.mode == "train"),
        batch_(*options_.memory.batch),
        seq_(*options_.memory.seq),
        attention_(AttentionBlocks::Of(model_->config())),
        share_(tuning.share),
        torus_(TorusOf(options_)) {
    const SuggestOptions& options = options_;
    // The mesh axes, in the config's order (EasyDeL's sharding_axis_names).
    for (const Json& name : model_->config().value("sharding_axis_names", Json::array())) {
      if (name.is_string()) names_.push_back(name.get<std::string>());
    }
    if (names_.empty()) names_ = {"dp", "fsdp", "ep", "tp", "sp"};
    // Training searches pipelines too: the pp axis, outermost (each stage's devices contiguous).
    if (train_ && dims_.layers >= 2 && options.max_pp > 1) {
      names_.insert(names_.begin(), std::string(planner::kPipelineAxis));
    }
    std::vector<bool> fixed_one(names_.size(), false);
    for (size_t k = 0; k < names_.size(); ++k) fixed_one[k] = names_[k] == parallel_.ep && dims_.experts == 0;
    std::vector<int64_t> scratch;
    Factorizations(SuggestDevices(options), names_.size(), fixed_one, scratch, meshes_);
    // --slices: K's factors placed on the outer axes (the pipeline's stages, dp, then fsdp), as --dcn
    // places them: stages on different nodes is the usual pipeline layout.
    std::vector<size_t> outer;
    for (size_t k = 0; k < names_.size(); ++k) {
      if (names_[k] == planner::kPipelineAxis || names_[k] == parallel_.dp || names_[k] == parallel_.fsdp) {
        outer.push_back(k);
      }
    }
    if (options.slices == 1 || outer.empty()) {
      dcn_splits_.push_back(std::vector<int64_t>(names_.size(), 1));
    } else {
      std::vector<std::vector<int64_t>> splits;
      Factorizations(options.slices, outer.size(), std::vector<bool>(outer.size(), false), scratch, splits);
      for (const std::vector<int64_t>& split : splits) {
        std::vector<int64_t> dcn(names_.size(), 1);
        for (size_t i = 0; i < outer.size(); ++i) dcn[outer[i]] = split[i];
        dcn_splits_.push_back(dcn);
      }
    }
    rule_sets_ = {"builtin"};
    for (const std::string& file : options.rules) rule_sets_.push_back(file);
    policies_ = train_ ? static_cast<int64_t>(std::size(kPolicies)) : 1;
    if (train_) state_bytes_ = TrainingStateBytes();
    // The same for every memory report of the search (an error is BuildMemoryReport's to return).
    if (StatusOr<planner::MemoryModel> memory = StepMemoryModel(*model_); memory.ok()) memory_model_ = *memory;
  }

  size_t meshes() const { return meshes_.size(); }

  // The two passes of a search: the meshes without a pipeline first, then (training) the pipelined ones,
  // each pruned by what the first pass found (`PipelineFloor`).
  enum class Pass { kFlat, kPipelined };

  /// What a pipelined candidate cannot beat: the least compute (without recomputation or the update) any
  /// flat candidate's device does in a step, and the best flat step time. Every device of a pipeline does
  /// the same FLOPs, plus the bubble: a pipeline whose compute with its least bubble is already slower
  /// than the best flat step cannot win, and is not planned.
  struct PipelineFloor {
    double compute_s = 0;
    double best_step_s = 0;
    bool known = false;
  };

  Status Run(size_t worker, size_t workers, Pass pass, const PipelineFloor& floor, Partial& part) const {
    part.step_models.resize(rule_sets_.size());
    const int64_t per_placement = static_cast<int64_t>(rule_sets_.size()) * policies_;
    const bool pipelined_axis = names_.front() == planner::kPipelineAxis;
    for (size_t i = worker; i < meshes_.size(); i += workers) {
      const std::vector<int64_t>& sizes = meshes_[i];
      if ((pipelined_axis && sizes[0] > 1) != (pass == Pass::kPipelined)) continue;
      const std::vector<Schedule> schedules = SchedulesFor(names_.front() == planner::kPipelineAxis ? sizes[0] : 1);
      const int64_t count =
          per_placement * static_cast<int64_t>(dcn_splits_.size()) * static_cast<int64_t>(schedules.size());
      part.considered += count;
      if (std::string reason = RejectedBeforePlanning(sizes); !reason.empty()) {
        part.Reject(reason, count);
        continue;
      }
      // The mesh's slice placements that place, each with its position in the enumeration.
      std::vector<std::pair<Candidate, size_t>> placements;
      for (size_t d = 0; d < dcn_splits_.size(); ++d) {
        Candidate shape;
        shape.axis_names = names_;
        shape.mesh = sizes;
        shape.dcn = dcn_splits_[d];
        bool placed = true;
        for (size_t k = 0; k < names_.size(); ++k) placed = placed && sizes[k] % shape.dcn[k] == 0;
        if (!placed) {
          part.Reject("slices not placeable on dp x fsdp", per_placement * static_cast<int64_t>(schedules.size()));
          continue;
        }
        placements.emplace_back(std::move(shape), d);
      }
      for (size_t r = 0; r < rule_sets_.size(); ++r) {
        // What the placements of one mesh share (MeshWork, ScheduleWork): which axes cross the slow network
        // changes only the prices of the step's links, so one plan, one memory report per policy and
        // microbatch count, and one dry run per microbatch size serve every placement.
        MeshWork mesh_work;
        for (const Schedule& schedule : schedules) {
          ScheduleWork schedule_work;
          for (const auto& [shape, d] : placements) {
            if (!share_) {
              mesh_work = {};
              schedule_work = {};
            }
            if (CannotBeatTheFlatSteps(shape.Stages(), schedule, floor)) {
              part.Reject("pipeline slower than the best step without one (its compute and least bubble)",
                          per_placement);
              continue;
            }
            const int64_t order =
                static_cast<int64_t>((i * dcn_splits_.size() + d) * rule_sets_.size() + r) * policies_;
            EP_RETURN_IF_ERROR(PricePlacement(shape, schedule, r, order, mesh_work, schedule_work, part));
          }
        }
      }
    }
    return Status();
  }

 private:
  // A pipeline schedule a placement is priced under ("" and 1 without a pipeline).
  struct Schedule {
    std::string name;
    int64_t virtual_stages = 1;
  };

  // The schedules tried on a mesh of `stages` pipeline stages: none without a pipeline; the one given
  // (GPipe also circular, MaxText's num_pipeline_repeats, and interleaved, each with 2 to 4 virtual
  // stages unless --virtual-stages picks one); else 1F1B and interleaved with 2 to 4 virtual stages,
  // whose chunks split the layers evenly (more virtual stages shrink the bubble further but cross more
  // boundaries; past 4 the sends dominate).
  std::vector<Schedule> SchedulesFor(int64_t stages) const {
    if (stages <= 1) return {Schedule{}};
    std::vector<Schedule> tried;
    const std::string given = options_.pp_schedule.value_or("");
    auto add_virtual = [&](const std::string& name) {
      for (int64_t v = 2; v <= std::max<int64_t>(4, options_.virtual_stages.value_or(0)); ++v) {
        if (!options_.virtual_stages || *options_.virtual_stages == v) tried.push_back({name, v});
      }
    };
    if (given.empty()) {
      tried.push_back({"1f1b", 1});
      add_virtual("interleaved");
    } else if (given == "interleaved") {
      add_virtual("interleaved");
    } else if (given == "gpipe") {
      if (!options_.virtual_stages) tried.push_back({"gpipe", 1});
      add_virtual("gpipe");
    } else {
      tried.push_back({given, 1});
    }
    std::vector<Schedule> out;
    for (const Schedule& s : tried) {
      if (Balanced(stages, s)) out.push_back(s);
    }
    return out;
  }

  // Whether the stages of `schedule` balance: the default split (planner::SplitLayers, the extra layers
  // on the middle stages) gives no stage more than 10% over the mean layer count, the imbalance the
  // plan's pipeline-imbalance finding warns of. A stage that waits on a heavier one cannot win.
  bool Balanced(int64_t stages, const Schedule& schedule) const {
    const planner::PipelineSchedule parsed =
        planner::ParsePipelineSchedule(schedule.name).value_or(planner::PipelineSchedule::k1F1B);
    StatusOr<planner::PipelineSplit> split =
        planner::SplitLayers(dims_.layers, stages, schedule.virtual_stages, parsed, {});
    if (!split.ok()) return false;
    int64_t most = 0;
    for (int64_t s = 0; s < stages; ++s) most = std::max(most, split->LayerCount(s));
    return static_cast<double>(most) * static_cast<double>(stages) <= 1.1 * static_cast<double>(dims_.layers);
  }

  // The microbatch counts tried for a step: without a pipeline every count from 1 (the fewest that fits
  // wins); with one, the counts the schedule can run, doubling from the stage count (each is priced and
  // the fastest that fits wins: more microbatches shrink the bubble and the activations, and make each
  // matmul smaller).
  std::vector<int64_t> MicrobatchCounts(int64_t stages, int64_t batch_tiles) const {
    const int64_t most = std::min(options_.max_microbatches, batch_);
    std::vector<int64_t> out;
    auto valid = [&](int64_t m) { return batch_ % m == 0 && (batch_ / m) % batch_tiles == 0; };
    if (stages <= 1) {
      for (int64_t m = 1; m <= (train_ ? most : 1); ++m) {
        if (valid(m)) out.push_back(m);
      }
      return out;
    }
    for (int64_t m = stages; m <= most; m *= 2) {
      if (valid(m)) out.push_back(m);
    }
    // Every count above is a multiple of the stages, which interleaving needs, and at least the stages,
    // which 1F1B, zero bubble and the circular GPipe need (planner::CheckMicrobatches).
    // The largest first: the smallest bubble and activations; PricePlacement goes down while it gains.
    std::reverse(out.begin(), out.end());
    return out;
  }

  // A pipelined placement's floor: the flat candidates' least compute, stretched by the schedule's
  // least bubble at the most microbatches the step allows (step::LeastBubbleFraction, never more than the
  // simulated schedule's: step/pipeline_step_test.cc).
  bool CannotBeatTheFlatSteps(int64_t stages, const Schedule& schedule, const PipelineFloor& floor) const {
    if (stages <= 1 || !floor.known) return false;
    const int64_t most = std::max<int64_t>(1, std::min(options_.max_microbatches, batch_));
    const std::optional<planner::PipelineSchedule> parsed = planner::ParsePipelineSchedule(schedule.name);
    if (!parsed) return false;
    StatusOr<planner::PipelineSplit> split =
        planner::SplitLayers(dims_.layers, stages, schedule.virtual_stages, *parsed, {});
    if (!split.ok()) return false;
    return floor.compute_s * (1 + step::LeastBubbleFraction(*split, most)) >= floor.best_step_s;
  }

  // A training step holds every parameter, its gradient and its optimizer state once across the devices
  // that shard it, and only dp replicates them: no layout puts less than state x dp / devices on a
  // device. The bytes of that state (adamw's two moments, lion's one; adafactor's factored moments and
  // sgd count none here, a floor), from the tree the search plans.
  double TrainingStateBytes() const {
    StatusOr<TreeSpec> spec = TreeSpecOf(options_.plan);
    if (!spec.ok()) return 0;
    StatusOr<Model::TreePtr> tree = model_->Tree(*spec);
    if (!tree.ok()) return 0;
    const std::optional<planner::Optimizer> optimizer = planner::ParseOptimizer(options_.memory.optimizer);
    const std::optional<DType> state = ParseDType(options_.memory.opt_state_dtype);
    const std::optional<DType> grad =
        options_.memory.grad_dtype.empty() ? std::nullopt : ParseDType(options_.memory.grad_dtype);
    const double state_bytes = state ? DTypeBits(*state) / 8.0 : 4.0;
    const double moments = optimizer == planner::Optimizer::kAdamW ? 2 : optimizer == planner::Optimizer::kLion ? 1 : 0;
    double total = 0;
    for (const TensorEntry& t : (*tree)->tensors) {
      if (t.role != TensorRole::kParameter) continue;
      const double elements = static_cast<double>(t.shape.NumElements().value_or(0));
      const double own = DTypeBits(t.dtype) / 8.0;
      total += elements * (own + (grad ? DTypeBits(*grad) / 8.0 : own) + moments * state_bytes +
                           (options_.memory.master_weights ? 4.0 : 0.0));
    }
    return total;
  }

  // Why EasyDeL rejects the mesh `sizes` before it builds anything; "" when it does not.
  std::string RejectedBeforePlanning(const std::vector<int64_t>& sizes) const {
    const int64_t stages = sizes[0];
    if (names_.front() == planner::kPipelineAxis && stages > options_.max_pp)
      return "more pipeline stages than --max-pp";
    if (names_.front() == planner::kPipelineAxis && stages > 1) {
      if (SchedulesFor(stages).empty()) return "pipeline stages do not balance the layers";
      if (std::min(options_.max_microbatches, batch_) < stages) return "fewer microbatches than pipeline stages";
    }
    const int64_t head_tiles = Tiles(names_, sizes, dims_.axes.head);
    if (dims_.heads > 0 && dims_.heads % head_tiles != 0) return "heads not divisible by the head axes";
    if (dims_.kv_heads > 0 && dims_.kv_heads % head_tiles != 0) return "kv heads not divisible by the head axes";
    if (batch_ % Tiles(names_, sizes, dims_.axes.batch) != 0) return "batch not divisible by the batch axes";
    if (options_.memory.mode != "decode") {
      const int64_t seq_tiles = Tiles(names_, sizes, dims_.axes.sequence);
      if (seq_ % seq_tiles != 0) return "sequence not divisible by the sequence axes";
      if (std::string reason = attention_.Rejection(seq_, seq_tiles); !reason.empty()) return reason;
    }
    if (dims_.experts > 0) {
      const planner::ExpertMesh folded = planner::FoldExpertMesh(Mesh{names_, sizes, {}}, parallel_, binding_);
      const int64_t shards = folded.shape[planner::ExpertMesh::kEp];
      if (shards > 1 && dims_.experts % shards != 0) return "experts not divisible by the folded expert axis";
    }
    return "";
  }

  // What every placement of one mesh (its slice placements) shares under one rule set: the inputs of its
  // first plan, and per microbatch count its activation plan and its dry run (neither depends on which
  // stage holds a layer, nor on which axes cross slices).
  struct MeshWork {
    std::optional<PlanInputs> inputs;  ///< the first schedule's; another schedule re-splits it
    std::map<int64_t, StepActivations> activations;
    std::map<int64_t, kernels::DryRunReport> runs;
  };

  // What the placements of one mesh share under one schedule: the plan (or why it has errors) and its
  // memory per policy and microbatch count. Slices change neither (the layout and the bytes a device
  // holds are the mesh's); PricePlacement sets the placement's --dcn on the mesh before pricing.
  struct ScheduleWork {
    bool planned = false;
    std::optional<PlanInputs> inputs;
    std::optional<planner::Plan> plan;
    std::string plan_error;                                                ///< the rejection of a plan with errors
    std::map<std::pair<int64_t, int64_t>, planner::MemoryReport> reports;  ///< by policy and microbatch count
    /// Per microbatch count: the mesh's dry run with this plan's step records (its split's sends).
    std::map<int64_t, kernels::DryRunReport> runs;
  };

  // The --dcn factors of `shape` as MeshFromOptions lays them on `mesh` (the candidate's axes, pp left out
  // without a pipeline): one per axis, none when no axis crosses slices.
  static std::vector<int64_t> DcnShapeOf(const Candidate& shape, const Mesh& mesh) {
    if (shape.DcnFlag().empty()) return {};
    std::vector<int64_t> dcn;
    for (const std::string& name : mesh.axis_names) {
      const auto it = std::find(shape.axis_names.begin(), shape.axis_names.end(), name);
      dcn.push_back(it == shape.axis_names.end() ? 1 : shape.dcn[static_cast<size_t>(it - shape.axis_names.begin())]);
    }
    return dcn;
  }

  // Plans the mesh placement `shape` with rule set `r` under `schedule` (once per mesh: `schedule_work`) and
  // prices every policy on it.
  Status PricePlacement(const Candidate& shape, const Schedule& schedule, size_t r, int64_t order, MeshWork& mesh_work,
                        ScheduleWork& work, Partial& part) const {
    if (train_ && state_bytes_ > 0) {
      const double replicas = static_cast<double>(Tiles(names_, shape.mesh, {parallel_.dp}));
      const double devices = static_cast<double>(SuggestDevices(options_));
      if (state_bytes_ * replicas / devices > static_cast<double>(budget_)) {
        part.Reject("does not fit at any microbatch count", policies_);
        return Status();
      }
    }
    const int64_t stages = shape.Stages();
    if (!work.planned) {
      // The candidate's layout: rules, mesh and schedule, fields CheckPlanOptions does not read (the mesh and
      // the schedule are checked when the plan is prepared on the model, as every plan's are).
      const Checked<PlanOptions> plan_options = plan_.Edited([&](PlanOptions& p) {
        p.rules = rule_sets_[r];
        p.mesh.axes = shape.MeshFlag();
        p.mesh.dcn = shape.DcnFlag();
        if (stages > 1) {
          p.pipeline.schedule = schedule.name;
          p.pipeline.virtual_stages = schedule.virtual_stages;
          p.pipeline.supported = true;
          p.pipeline.roles = part.pipeline_roles;
        }
      });
      if (mesh_work.inputs) {
        work.inputs = *mesh_work.inputs;
        EP_RETURN_IF_ERROR(AddPipeline(*work.inputs, plan_options->pipeline));
      } else {
        EP_ASSIGN_OR_RETURN(work.inputs, PreparePlan(model_, plan_options));
        mesh_work.inputs = work.inputs;
        if (!part.pipeline_roles) part.pipeline_roles = work.inputs->pipeline_roles;
        // The placements share this mesh and set their own --dcn on it: it must be laid out as they expect.
        if (work.inputs->mesh.dcn_shape != DcnShapeOf(shape, work.inputs->mesh)) {
          return Status::Internal("suggest: the mesh's --dcn factors are not laid out as expected");
        }
      }
      work.planned = true;
      EP_ASSIGN_OR_RETURN(planner::Plan plan, work.inputs->Build());
      if (plan.HasErrors()) {
        const auto error = std::find_if(plan.findings.begin(), plan.findings.end(),
                                        [](const planner::Finding& f) { return f.severity == Severity::kError; });
        work.plan_error = fmt::format("plan error [{}]", planner::FindingCodeName(error->code));
      } else {
        work.plan = std::move(plan);
      }
    }
    if (!work.plan) {
      part.Reject(work.plan_error, policies_);
      return Status();
    }
    PlanInputs& inputs = *work.inputs;
    planner::Plan& plan = *work.plan;
    // This placement's slices: what prices its links.
    inputs.mesh.dcn_shape = plan.mesh.dcn_shape = DcnShapeOf(shape, plan.mesh);
    if (!part.step_models[r]) {
      EP_ASSIGN_OR_RETURN(part.step_models[r], StepModelOf(inputs, plan));
    }
    const StepModel& step_model = *part.step_models[r];
    const int64_t batch_tiles = Tiles(names_, shape.mesh, dims_.axes.batch);
    const std::vector<int64_t> counts = MicrobatchCounts(stages, batch_tiles);
    std::map<int64_t, StepActivations>& activations = mesh_work.activations;
    std::map<int64_t, kernels::DryRunReport>& runs = mesh_work.runs;
    for (int64_t p = 0; p < policies_; ++p) {
      StepSettings settings;
      settings.mode = MemoryModeOf(options_.memory.mode);
      settings.precision = PrecisionOf(options_.pricing);
      settings.torus = torus_;
      settings.batch = batch_;
      settings.seq = seq_;
      settings.policy = train_ ? kPolicies[p] : planner::CheckpointPolicy::kNone;
      // Without a pipeline, the fewest microbatches whose step fits; with one, the fastest count that fits.
      std::optional<Candidate> best;
      bool uneven = false;
      bool memory_limited = false;  // a pipeline's search stopped at a count that does not fit
      for (int64_t m : counts) {
        if (best && stages <= 1) break;
        settings.microbatches = m;
        auto memory = work.reports.find({p, m});
        if (memory == work.reports.end()) {
          const MemoryOptions step_memory = StepMemoryOptions(options_.memory, settings);
          auto step = activations.find(m);
          if (step == activations.end()) {
            EP_ASSIGN_OR_RETURN(StepActivations built, BuildStepActivations(inputs, step_memory));
            step = activations.emplace(m, std::move(built)).first;
          }
          EP_ASSIGN_OR_RETURN(planner::MemoryReport built,
                              BuildMemoryReport(inputs, plan, step_memory, budget_, settings.policy, &step->second,
                                                /*worst_only=*/true, memory_model_ ? &*memory_model_ : nullptr));
          memory = work.reports.emplace(std::make_pair(p, m), std::move(built)).first;
        }
        const planner::MemoryReport& report = memory->second;
        // A pipeline's larger microbatches (fewer of them) keep more activations in flight, except under
        // GPipe, which keeps them all: past the first count that does not fit, none does.
        if (!report.fits) {
          if (stages > 1 && schedule.name != "gpipe") {
            memory_limited = true;
            break;
          }
          continue;
        }
        auto run = work.runs.find(m);
        if (run == work.runs.end()) {
          auto forward = runs.find(m);
          if (forward == runs.end()) {
            StatusOr<kernels::DryRunReport> made = DryRunStep(inputs, plan, step_model, settings);
            if (!made.ok()) {
              uneven = true;
              break;
            }
            forward = runs.emplace(m, std::move(*made)).first;
          }
          EP_ASSIGN_OR_RETURN(kernels::DryRunReport with_records,
                              WithStepRecords(inputs, plan, step_model, options_.memory, settings, forward->second));
          run = work.runs.emplace(m, std::move(with_records)).first;
        }
        Candidate candidate = shape;
        candidate.order = order + p;
        candidate.rules = rule_sets_[r];
        candidate.policy = settings.policy;
        candidate.microbatches = m;
        if (stages > 1) {
          candidate.pp_schedule = schedule.name;
          candidate.virtual_stages = schedule.virtual_stages;
        }
        EP_ASSIGN_OR_RETURN(candidate.estimate, EstimateStep(inputs, plan, step_model, hardware_, options_.memory,
                                                             budget_, settings, &report, &run->second));
        // A pipeline goes from the most microbatches down while fewer (larger) ones are faster.
        if (best && candidate.estimate.step.step_time_s >= best->estimate.step.step_time_s) break;
        best = std::move(candidate);
      }
      if (uneven) {
        part.Reject("uneven layout the step-time model cannot price", policies_ - p);
        return Status();
      }
      if (!best) {
        part.Reject("does not fit at any microbatch count", 1);
        continue;
      }
      if (options_.max_tpot_ms && best->estimate.step.step_time_s * 1e3 > *options_.max_tpot_ms) {
        part.Reject("time per output token above --max-tpot", 1);
        continue;
      }
      part.ranked.push_back(std::move(*best));
      // The policies come in order of the recomputation they add: once a pipeline's microbatch count was
      // set by time rather than by memory, a later policy runs the same counts with more work and cannot
      // win.
      if (stages > 1 && !memory_limited) {
        if (p + 1 < policies_)
          part.Reject("pipeline policy with more recomputation than one that fits", policies_ - p - 1);
        break;
      }
    }
    return Status();
  }

  std::shared_ptr<const Model> model_;
  const SuggestOptions& options_;
  Checked<PlanOptions> plan_;  ///< options_.plan, checked with them: each candidate's plan edits its layout
  schemas::ModelDims dims_;
  const step::HardwareProfile& hardware_;
  int64_t budget_;
  planner::ParallelAxisNames parallel_;
  planner::ExpertBinding binding_;
  bool train_;
  int64_t batch_, seq_;
  AttentionBlocks attention_;
  bool share_;
  std::vector<int64_t> torus_;  ///< --torus, parsed (checked before the search)
  std::vector<std::string> names_;
  std::vector<std::vector<int64_t>> meshes_;
  std::vector<std::vector<int64_t>> dcn_splits_;
  std::vector<std::string> rule_sets_;
  int64_t policies_ = 1;
  std::optional<planner::MemoryModel> memory_model_;  ///< StepMemoryModel of the model
  /// Training: every parameter with its gradient and optimizer state, in bytes (StateFloor).
  double state_bytes_ = 0;
};

}  // namespace

StatusOr<SuggestResult> Suggest(const std::shared_ptr<const Model>& model, const SuggestOptions& given,
                                const SearchTuning& tuning) {
  // --devices is a config option: the Model's own when the caller's options do not repeat it.
  SuggestOptions options = given;
  if (!options.plan.config.devices) options.plan.config.devices = model->options().devices;
  EP_ASSIGN_OR_RETURN(const Checked<SuggestOptions> checked, Checked<SuggestOptions>::Of(std::move(options)));
  return Suggest(model, checked, tuning);
}

StatusOr<SuggestResult> Suggest(const std::shared_ptr<const Model>& model, const Checked<SuggestOptions>& checked,
                                const SearchTuning& tuning) {
  const SuggestOptions& options = *checked;
  EP_RETURN_IF_ERROR(CheckStepMicrobatches("--max-microbatches", options.max_microbatches, model->env().limits));
  if (!model->has_config()) return Status::BadInput({}, "suggest needs CONFIG");
  std::string budget_label;
  EP_ASSIGN_OR_RETURN(const int64_t budget, MemoryBudget(*model, options.memory, &budget_label));
  EP_ASSIGN_OR_RETURN(const step::HardwareProfile* hardware, model->Hardware(options.memory.hardware));
  EP_RETURN_IF_ERROR(CheckPrecisionOn(PrecisionOf(options.pricing), *hardware));
  // --torus: a TPU profile, and dims that hold one slice's chips (every candidate lays its mesh on them).
  EP_ASSIGN_OR_RETURN(const std::vector<int64_t> torus, ParseTorus(options.pricing.torus));
  EP_RETURN_IF_ERROR(CheckTorusOn(torus, *hardware));
  if (!torus.empty()) {
    EP_RETURN_IF_ERROR(step::LayOutSlice(*hardware, {SuggestDevices(options) / options.slices}, torus).status());
  }
  EP_ASSIGN_OR_RETURN(schemas::ModelDims dims, schemas::ModelDimsOf(model->resolved()));
  EP_ASSIGN_OR_RETURN(std::vector<planner::Finding> findings, ContextLengthFindings(dims, options.memory));
  // Every candidate is priced by the family's forward pass: a family without one is refused up front,
  // whether or not some mesh would have been planned (the memory floor rejects some before planning).
  EP_RETURN_IF_ERROR(ForwardPassOf(*model, "the step-time model", "cost and suggest need one").status());
  const Search search(model, checked, std::move(dims), *hardware, budget, tuning);

  const size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::vector<Partial> parts(std::min(workers, std::max<size_t>(search.meshes(), 1)));
  auto run_pass = [&](Search::Pass pass, const Search::PipelineFloor& floor) {
    std::vector<std::thread> threads;
    for (size_t w = 1; w < parts.size(); ++w) {
      threads.emplace_back([&, w] {
        if (parts[w].status.ok()) parts[w].status = search.Run(w, parts.size(), pass, floor, parts[w]);
      });
    }
    if (parts[0].status.ok()) parts[0].status = search.Run(0, parts.size(), pass, floor, parts[0]);
    for (std::thread& t : threads) t.join();
  };
  run_pass(Search::Pass::kFlat, {});
  // The flat candidates bound what a pipeline can gain.
  Search::PipelineFloor floor;
  for (const Partial& part : parts) {
    for (const Candidate& c : part.ranked) {
      const step::StepCost& step = c.estimate.step;
      const double compute = step.compute_s - step.recompute_s - step.update_s;
      floor.compute_s = floor.known ? std::min(floor.compute_s, compute) : compute;
      floor.best_step_s = floor.known ? std::min(floor.best_step_s, step.step_time_s) : step.step_time_s;
      floor.known = true;
    }
  }
  run_pass(Search::Pass::kPipelined, floor);
  SuggestResult result;
  result.findings = std::move(findings);
  result.model_type = model->model_type();
  result.easydel_version = model->easydel_version().name;
  result.hardware = hardware;
  result.limits = model->env().limits;
  result.assumptions =
      StepAssumptions(*model, {.train = options.memory.mode == "train", .priced = true, .policy_searched = true});
  result.matmul_assumption = result.assumptions.size();
  result.assumptions.push_back(step::MatmulEfficiencyAssumption(*hardware));
  result.matmul_assumption_brief = step::MatmulEfficiencyAssumption(*hardware, false);
  if (!options.pricing.torus.empty()) {
    result.assumptions.push_back(fmt::format(
        "each slice of {} chips a {} torus, as --torus gives it (not Cloud TPU's topology for that chip count); every "
        "candidate's mesh laid on it as jax mesh_utils.create_device_mesh lays it, or row-major where that has no "
        "layout "
        "(`cost --torus` shows a candidate's)",
        SuggestDevices(options) / options.slices, options.pricing.torus));
  }
  for (Partial& part : parts) {
    EP_RETURN_IF_ERROR(part.status);
    result.considered += part.considered;
    for (const auto& [reason, count] : part.rejected) result.rejected[reason] += count;
    for (Candidate& c : part.ranked) result.ranked.push_back(std::move(c));
  }
  // Decode ranks by tokens/s per device (what a serving fleet buys), the others by step time; for one
  // batch on one device count the two orders agree, and the rate says what the ranking means.
  const bool decode = options.memory.mode == "decode";
  std::stable_sort(result.ranked.begin(), result.ranked.end(), [decode](const Candidate& a, const Candidate& b) {
    // Rounded in double (std::nearbyint), never converted to an integer: a rate or a time past 2^63
    // units would be out of range for llround.
    if (decode) {
      const double ar = std::nearbyint(a.estimate.tokens_per_s_per_device * 1e3);
      const double br = std::nearbyint(b.estimate.tokens_per_s_per_device * 1e3);
      if (ar != br) return ar > br;
    }
    // Whole nanoseconds: sums in another order differ in the last bits, which is no difference.
    const double at = std::nearbyint(a.estimate.step.step_time_s * 1e9);
    const double bt = std::nearbyint(b.estimate.step.step_time_s * 1e9);
    if (at != bt) return at < bt;
    if (WorstTotal(a) != WorstTotal(b)) return WorstTotal(a) < WorstTotal(b);
    return a.order < b.order;
  });
  // The Pareto front: no other candidate is as fast and as small and better in one. Ranked by time
  // (then memory), a candidate is on it when it needs less memory than every candidate before it.
  int64_t smallest = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < result.ranked.size(); ++i) {
    const int64_t total = WorstTotal(result.ranked[i]);
    if (total < smallest) {
      result.pareto.push_back(i);
      smallest = total;
    }
  }
  if (result.ranked.size() >= 2) {
    const StepEstimate& w = result.ranked[0].estimate;
    const StepEstimate& r = result.ranked[1].estimate;
    std::vector<TermDifference> terms = {
        {"compute (without recompute)", w.step.compute_s - w.step.recompute_s, r.step.compute_s - r.step.recompute_s,
         "s"},
        {"recompute", w.step.recompute_s, r.step.recompute_s, "s"},
        {"exposed communication", w.step.exposed_communication_s, r.step.exposed_communication_s, "s"},
        {"communication (all)", w.step.communication_s, r.step.communication_s, "s"},
    };
    std::stable_sort(terms.begin(), terms.end(), [](const TermDifference& a, const TermDifference& b) {
      return std::fabs(a.winner - a.runner_up) > std::fabs(b.winner - b.runner_up);
    });
    terms.push_back({"memory per device", static_cast<double>(WorstTotal(result.ranked[0])),
                     static_cast<double>(WorstTotal(result.ranked[1])), "bytes"});
    result.winner_vs_runner_up = std::move(terms);
  }
  return result;
}

std::vector<std::string> ReproduceCommands(const SuggestOptions& o, const Candidate& c, const Limits& limits) {
  // What every command shares: the model as the search read it (its --devices was the search's size; each
  // command's mesh states every axis), the limits it ran under, the candidate's rules, mesh and slices, the
  // user's --uneven and, for a pipeline, its schedule.
  CommandOptions base;
  base.plan.config = o.plan.config;
  base.plan.config.devices.reset();
  base.plan.rules = c.rules;
  base.plan.uneven = o.plan.uneven;
  base.plan.mesh.axes = c.MeshFlag();
  base.plan.mesh.dcn = c.DcnFlag();
  base.plan.mesh.max_devices = o.plan.mesh.max_devices;
  base.limits = {static_cast<int64_t>(limits.max_input_bytes),
                 limits.max_depth,
                 static_cast<int64_t>(limits.max_values),
                 limits.max_layers,
                 static_cast<int64_t>(limits.max_output_bytes),
                 limits.max_microbatch_count,
                 limits.max_timeline_passes};
  if (c.Stages() > 1) {
    base.plan.pipeline.schedule = c.pp_schedule;
    base.plan.pipeline.virtual_stages = c.virtual_stages;
  }
  // The step: its mode, state and budget, and in training the candidate's checkpoint policy.
  CommandOptions step = base;
  step.memory = o.memory;
  if (step.memory.mode == "train") {
    step.plan.config.sets.push_back("gradient_checkpointing=" + PolicyFlagValue(c.policy));
  }
  // memory sees one microbatch without a pipeline; a pipeline's stages keep the step's microbatches in
  // flight, so it sees them all.
  CommandOptions memory = step;
  if (c.Stages() > 1) {
    memory.pricing.microbatches = c.microbatches;
  } else {
    memory.memory.batch = *o.memory.batch / c.microbatches;
  }
  CommandOptions cost = step;
  cost.pricing = o.pricing;
  cost.pricing.microbatches = c.microbatches;
  return {CommandLine("plan", base), CommandLine("memory", memory), CommandLine("cost", cost)};
}

Json SuggestToJson(const SuggestOptions& options, const SuggestResult& result) {
  // The top candidates, then every Pareto candidate below them, in rank order.
  std::vector<size_t> shown;
  for (size_t i = 0; i < result.ranked.size() && i < static_cast<size_t>(options.top); ++i) shown.push_back(i);
  for (size_t i : result.pareto) {
    if (i >= static_cast<size_t>(options.top)) shown.push_back(i);
  }
  Json out = Json::object();
  out["model_type"] = result.model_type;
  out["easydel_version"] = result.easydel_version;
  out["hardware"] = options.memory.hardware;
  out["devices"] = SuggestDevices(options);
  out["slices"] = options.slices;
  out["precision"] = options.pricing.precision;
  out["mode"] = options.memory.mode;
  out["batch"] = *options.memory.batch;
  out["seq"] = *options.memory.seq;
  Json candidates = Json::array();
  Json pareto = Json::array();
  for (size_t n = 0; n < shown.size(); ++n) {
    const Candidate& c = result.ranked[shown[n]];
    const StepEstimate& e = c.estimate;
    Json item = Json::object();
    item["rank"] = shown[n] + 1;
    item["mesh"] = AxisSizesJson(c.axis_names, c.mesh);
    if (c.Stages() <= 1) item["mesh"].erase(std::string(planner::kPipelineAxis));  // the config's axes alone
    item["dcn"] = AxisSizesJson(c.axis_names, c.dcn, /*skip_ones=*/true);
    if (c.Stages() > 1) {
      item["pp_schedule"] = c.pp_schedule;
      item["virtual_stages"] = c.virtual_stages;
    }
    item["gradient_checkpointing"] = PolicyFlagValue(c.policy);
    item["microbatches"] = c.microbatches;
    item["rules"] = c.rules;
    item["step_time_s"] = e.step.step_time_s;
    if (options.memory.mode == "decode") item["tpot_s"] = e.step.step_time_s;
    item["tokens_per_s"] = e.tokens_per_s;
    item["tokens_per_s_per_device"] = e.tokens_per_s_per_device;
    item["mfu"] = e.mfu;
    item["compute_s"] = e.step.compute_s;
    item["recompute_s"] = e.step.recompute_s;
    item["communication_s"] = e.step.communication_s;
    item["exposed_communication_s"] = e.step.exposed_communication_s;
    item["fits"] = e.fits;
    const planner::DeviceMemory& worst = e.memory.Worst();
    item["memory_total"] = worst.total;
    item["headroom"] = e.memory.budget_per_device - worst.total;
    item["forward_communication"] = KindBytesJson(e.step.forward);
    Json commands = Json::array();
    for (const std::string& command : ReproduceCommands(options, c, result.limits)) commands.push_back(command);
    item["commands"] = std::move(commands);
    candidates.push_back(std::move(item));
    if (std::find(result.pareto.begin(), result.pareto.end(), shown[n]) != result.pareto.end()) pareto.push_back(n);
  }
  out["candidates"] = std::move(candidates);
  out["feasible"] = result.ranked.size();
  out["considered"] = result.considered;
  Json rejected = Json::object();
  for (const auto& [reason, count] : result.rejected) rejected[reason] = count;
  out["rejected"] = std::move(rejected);
  out["pareto"] = std::move(pareto);
  if (!result.findings.empty()) out["findings"] = FindingsJsonArray(result.findings);
  Json why = Json::array();
  for (const TermDifference& t : result.winner_vs_runner_up) {
    Json item = Json::object();
    item["term"] = t.term;
    item["winner"] = t.winner;
    item["runner_up"] = t.runner_up;
    item["unit"] = t.unit;
    why.push_back(std::move(item));
  }
  out["winner_vs_runner_up"] = std::move(why);
  out["assumed"] = result.assumptions;
  return out;
}

}  // namespace easyplan::api
