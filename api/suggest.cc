#include "api/suggest.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>

#include "api/assumptions.h"
#include "api/memory_pipeline.h"
#include "api/option_checks.h"
#include "api/plan_inputs.h"
#include "planner/expert_mesh.h"
#include "planner/findings.h"
#include "schemas/model_dims.h"

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

std::string ShellWord(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                              "_-./=,:+@") == std::string::npos) {
    return word;
  }
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
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
  std::vector<int64_t> ici(mesh.size());
  for (size_t k = 0; k < mesh.size(); ++k) ici[k] = mesh[k] / dcn[k];
  return AxisFlag(axis_names, ici);
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
  if (options.max_tpot_ms) {
    EP_RETURN_IF_ERROR(CheckOptionValue("max_tpot", Json(*options.max_tpot_ms)));
    if (options.memory.mode != "decode") {
      return Status::BadInput({}, "--max-tpot bounds the time per output token: it needs --mode decode",
                              {"e.g. --mode decode --batch 1 --seq 4096 --max-tpot 20"});
    }
  }
  if (!options.plan.mesh.axes.empty() || !options.plan.mesh.dcn.empty()) {
    return Status::BadInput({}, "suggest chooses the mesh: --mesh and --dcn do not apply",
                            {"use --slices K for K slices or nodes; `cost --mesh ...` prices one mesh"});
  }
  // The step's own checks (the memory options, --decode) are cost's.
  CostOptions cost;
  cost.plan = options.plan;
  cost.memory = options.memory;
  cost.decode = options.decode;
  cost.precision = options.precision;
  return CheckCostOptions(cost, "suggest");
}

namespace {

// One worker's share of the search: the meshes are independent, so each worker takes every
// `workers`-th one into its own Partial, and Suggest merges them into one ranking.
struct Partial {
  std::vector<Candidate> ranked;
  std::map<std::string, int64_t> rejected;
  int64_t considered = 0;
  std::vector<std::optional<StepModel>> step_models;  ///< per rule set, from its first plan
  Status status;
  void Reject(const std::string& reason, int64_t count) { rejected[reason] += count; }
};

// What one search reads, fixed before it starts. Const, so workers share it (a Model is safe to share
// between threads).
class Search {
 public:
  Search(std::shared_ptr<const Model> model, const SuggestOptions& options, schemas::ModelDims dims,
         const planner::HardwareProfile& hardware, int64_t budget)
      : model_(std::move(model)),
        options_(options),
        dims_(std::move(dims)),
        hardware_(hardware),
        budget_(budget),
        parallel_(planner::ParallelAxisNamesOf(model_->config())),
        binding_(planner::ExpertBindingOf(model_->config())),
        train_(options.memory.mode == "train"),
        batch_(*options.memory.batch),
        seq_(*options.memory.seq),
        attention_(AttentionBlocks::Of(model_->config())) {
    // The mesh axes, in the config's order (EasyDeL's sharding_axis_names).
    for (const Json& name : model_->config().value("sharding_axis_names", Json::array())) {
      if (name.is_string()) names_.push_back(name.get<std::string>());
    }
    if (names_.empty()) names_ = {"dp", "fsdp", "ep", "tp", "sp"};
    std::vector<bool> fixed_one(names_.size(), false);
    for (size_t k = 0; k < names_.size(); ++k) fixed_one[k] = names_[k] == parallel_.ep && dims_.experts == 0;
    std::vector<int64_t> scratch;
    Factorizations(SuggestDevices(options), names_.size(), fixed_one, scratch, meshes_);
    // --slices: K's factors placed on the outer data axes (dp, then fsdp), as --dcn places them.
    std::vector<size_t> outer;
    for (size_t k = 0; k < names_.size(); ++k) {
      if (names_[k] == parallel_.dp || names_[k] == parallel_.fsdp) outer.push_back(k);
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
  }

  size_t meshes() const { return meshes_.size(); }

  Status Run(size_t worker, size_t workers, Partial& part) const {
    part.step_models.resize(rule_sets_.size());
    const int64_t per_placement = static_cast<int64_t>(rule_sets_.size()) * policies_;
    for (size_t i = worker; i < meshes_.size(); i += workers) {
      const std::vector<int64_t>& sizes = meshes_[i];
      const int64_t count = per_placement * static_cast<int64_t>(dcn_splits_.size());
      part.considered += count;
      if (std::string reason = RejectedBeforePlanning(sizes); !reason.empty()) {
        part.Reject(reason, count);
        continue;
      }
      for (size_t d = 0; d < dcn_splits_.size(); ++d) {
        Candidate shape;
        shape.axis_names = names_;
        shape.mesh = sizes;
        shape.dcn = dcn_splits_[d];
        bool placed = true;
        for (size_t k = 0; k < names_.size(); ++k) placed = placed && sizes[k] % shape.dcn[k] == 0;
        if (!placed) {
          part.Reject("slices not placeable on dp x fsdp", per_placement);
          continue;
        }
        for (size_t r = 0; r < rule_sets_.size(); ++r) {
          const int64_t order = static_cast<int64_t>((i * dcn_splits_.size() + d) * rule_sets_.size() + r) * policies_;
          EP_RETURN_IF_ERROR(PricePlacement(shape, r, order, part));
        }
      }
    }
    return Status();
  }

 private:
  // Why EasyDeL rejects the mesh `sizes` before it builds anything; "" when it does not.
  std::string RejectedBeforePlanning(const std::vector<int64_t>& sizes) const {
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

  // Plans one mesh placement with rule set `r` and prices every policy on it.
  Status PricePlacement(const Candidate& shape, size_t r, int64_t order, Partial& part) const {
    PlanOptions plan_options = options_.plan;
    plan_options.rules = rule_sets_[r];
    plan_options.mesh.axes = shape.MeshFlag();
    plan_options.mesh.dcn = shape.DcnFlag();
    EP_ASSIGN_OR_RETURN(PlanInputs inputs, PreparePlan(model_, plan_options));
    EP_ASSIGN_OR_RETURN(planner::Plan plan, inputs.Build());
    if (plan.HasErrors()) {
      const auto error = std::find_if(plan.findings.begin(), plan.findings.end(),
                                      [](const planner::Finding& f) { return f.severity == Severity::kError; });
      part.Reject(fmt::format("plan error [{}]", planner::FindingCodeName(error->code)), policies_);
      return Status();
    }
    if (!part.step_models[r]) {
      EP_ASSIGN_OR_RETURN(part.step_models[r], StepModelOf(inputs, plan));
    }
    const StepModel& step_model = *part.step_models[r];
    const int64_t batch_tiles = Tiles(names_, shape.mesh, dims_.axes.batch);
    // One activation plan and one dry run per microbatch size, shared by every policy.
    std::map<int64_t, StepActivations> activations;
    std::map<int64_t, kernels::DryRunReport> runs;
    for (int64_t p = 0; p < policies_; ++p) {
      StepSettings settings;
      settings.mode = MemoryModeOf(options_.memory.mode);
      settings.decode = settings.mode == planner::MemoryMode::kDecode;
      settings.fp8 = options_.precision == "fp8";
      settings.batch = batch_;
      settings.seq = seq_;
      settings.policy = train_ ? kPolicies[p] : planner::CheckpointPolicy::kNone;
      // The fewest microbatches whose step fits.
      std::optional<planner::MemoryReport> fitting;
      const int64_t max_micro = std::min(train_ ? options_.max_microbatches : 1, batch_);
      for (int64_t m = 1; m <= max_micro && !fitting; ++m) {
        if (batch_ % m != 0 || (batch_ / m) % batch_tiles != 0) continue;
        settings.microbatches = m;
        const MemoryOptions step_memory = StepMemoryOptions(options_.memory, settings);
        auto step = activations.find(m);
        if (step == activations.end()) {
          EP_ASSIGN_OR_RETURN(StepActivations built, BuildStepActivations(inputs, step_memory));
          step = activations.emplace(m, std::move(built)).first;
        }
        EP_ASSIGN_OR_RETURN(planner::MemoryReport report,
                            BuildMemoryReport(inputs, plan, step_memory, budget_, settings.policy, &step->second,
                                              /*worst_only=*/true));
        if (report.fits) fitting = std::move(report);
      }
      if (!fitting) {
        part.Reject("does not fit at any microbatch count", 1);
        continue;
      }
      auto run = runs.find(settings.microbatches);
      if (run == runs.end()) {
        StatusOr<kernels::DryRunReport> made = DryRunStep(inputs, plan, step_model, settings);
        if (!made.ok()) {
          part.Reject("uneven layout the step-time model cannot price", policies_ - p);
          return Status();
        }
        run = runs.emplace(settings.microbatches, std::move(*made)).first;
      }
      Candidate candidate = shape;
      candidate.order = order + p;
      candidate.rules = rule_sets_[r];
      candidate.policy = settings.policy;
      candidate.microbatches = settings.microbatches;
      EP_ASSIGN_OR_RETURN(candidate.estimate, EstimateStep(inputs, plan, step_model, hardware_, options_.memory,
                                                           budget_, settings, &*fitting, &run->second));
      if (options_.max_tpot_ms && candidate.estimate.step.step_time_s * 1e3 > *options_.max_tpot_ms) {
        part.Reject("time per output token above --max-tpot", 1);
        continue;
      }
      part.ranked.push_back(std::move(candidate));
    }
    return Status();
  }

  std::shared_ptr<const Model> model_;
  const SuggestOptions& options_;
  schemas::ModelDims dims_;
  const planner::HardwareProfile& hardware_;
  int64_t budget_;
  planner::ParallelAxisNames parallel_;
  planner::ExpertBinding binding_;
  bool train_;
  int64_t batch_, seq_;
  AttentionBlocks attention_;
  std::vector<std::string> names_;
  std::vector<std::vector<int64_t>> meshes_;
  std::vector<std::vector<int64_t>> dcn_splits_;
  std::vector<std::string> rule_sets_;
  int64_t policies_ = 1;
};

}  // namespace

StatusOr<SuggestResult> Suggest(const std::shared_ptr<const Model>& model, const SuggestOptions& given) {
  // --devices is a config option: the Model's own when the caller's options do not repeat it (Python).
  SuggestOptions options = given;
  if (!options.plan.config.devices) options.plan.config.devices = model->options().devices;
  EP_RETURN_IF_ERROR(CheckSuggestOptions(options));
  if (!model->has_config()) return Status::BadInput({}, "suggest needs CONFIG");
  std::string budget_label;
  EP_ASSIGN_OR_RETURN(const int64_t budget, MemoryBudget(*model, options.memory, &budget_label));
  EP_ASSIGN_OR_RETURN(const planner::HardwareProfile* hardware, model->Hardware(options.memory.hardware));
  EP_RETURN_IF_ERROR(CheckPrecisionOn(options.precision, *hardware));
  EP_ASSIGN_OR_RETURN(schemas::ModelDims dims, schemas::ModelDimsOf(model->resolved()));
  const Search search(model, options, std::move(dims), *hardware, budget);

  const size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::vector<Partial> parts(std::min(workers, std::max<size_t>(search.meshes(), 1)));
  std::vector<std::thread> threads;
  for (size_t w = 1; w < parts.size(); ++w) {
    threads.emplace_back([&, w] { parts[w].status = search.Run(w, parts.size(), parts[w]); });
  }
  parts[0].status = search.Run(0, parts.size(), parts[0]);
  for (std::thread& t : threads) t.join();
  SuggestResult result;
  result.model_type = model->model_type();
  result.hardware = hardware;
  result.limits = model->env().limits;
  result.assumptions =
      StepAssumptions(*model, {.train = options.memory.mode == "train", .priced = true, .policy_searched = true});
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
    if (decode) {
      const int64_t ar = std::llround(a.estimate.tokens_per_s_per_device * 1e3);
      const int64_t br = std::llround(b.estimate.tokens_per_s_per_device * 1e3);
      if (ar != br) return ar > br;
    }
    // Whole nanoseconds: sums in another order differ in the last bits, which is no difference.
    const int64_t at = std::llround(a.estimate.step.step_time_s * 1e9);
    const int64_t bt = std::llround(b.estimate.step.step_time_s * 1e9);
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
  const auto flag = [](const std::string& name, const std::string& value) {
    return " " + name + " " + ShellWord(value);
  };
  // The config options: what the model is.
  const ConfigOptions& config = o.plan.config;
  std::string common = ShellWord(config.config.empty() ? "CONFIG" : config.config);
  const ConfigOptions defaults;
  if (config.defaults != defaults.defaults) common += flag("--defaults", config.defaults);
  if (!config.overrides.empty()) common += flag("--overrides", config.overrides);
  for (const std::string& set : config.sets) common += flag("--set", set);
  if (config.strict) common += " --strict";
  if (!config.schemas_dir.empty()) common += flag("--schemas-dir", config.schemas_dir);
  // The limits the search ran under, where raised or lowered (a model past the default --max-layers).
  const Limits default_limits;
  if (limits.max_input_bytes != default_limits.max_input_bytes) {
    common += " --max-input-bytes " + std::to_string(limits.max_input_bytes);
  }
  if (limits.max_depth != default_limits.max_depth) common += " --max-depth " + std::to_string(limits.max_depth);
  if (limits.max_values != default_limits.max_values) common += " --max-values " + std::to_string(limits.max_values);
  if (limits.max_layers != default_limits.max_layers) common += " --max-layers " + std::to_string(limits.max_layers);
  // The plan: the candidate's rules and mesh, the user's --uneven.
  if (c.rules != "builtin") common += flag("--rules", c.rules);
  common += " --mesh " + c.MeshFlag();
  if (!c.DcnFlag().empty()) common += " --dcn " + c.DcnFlag();
  const PlanOptions plan_defaults;
  if (o.plan.uneven != plan_defaults.uneven) common += flag("--uneven", o.plan.uneven);
  // The step: its mode, state and budget.
  const MemoryOptions& m = o.memory;
  const MemoryOptions memory_defaults;
  std::string step = flag("--hardware", m.hardware) + flag("--mode", m.mode);
  const bool train = m.mode == "train";
  if (train) {
    const std::string remat = PolicyFlagValue(c.policy);
    step += " --set gradient_checkpointing=" + (remat.empty() ? std::string("''") : remat);
  }
  if (m.max_length) step += " --max-length " + std::to_string(*m.max_length);
  if (m.optimizer != memory_defaults.optimizer) step += flag("--optimizer", m.optimizer);
  if (m.grad_dtype != memory_defaults.grad_dtype) step += flag("--grad-dtype", m.grad_dtype);
  if (m.opt_state_dtype != memory_defaults.opt_state_dtype) step += flag("--opt-state-dtype", m.opt_state_dtype);
  if (m.master_weights) step += " --master-weights";
  if (!m.max_memory.empty()) step += flag("--max-memory", m.max_memory);
  const int64_t micro_batch = *m.batch / c.microbatches;
  const std::string seq = " --seq " + std::to_string(*m.seq);
  std::vector<std::string> commands;
  commands.push_back("easyplan plan " + common);
  commands.push_back("easyplan memory " + common + step + " --batch " + std::to_string(micro_batch) + seq);
  std::string cost = "easyplan cost " + common + step + " --batch " + std::to_string(*m.batch) + seq;
  if (c.microbatches > 1) cost += " --microbatches " + std::to_string(c.microbatches);
  if (o.precision != "bf16") cost += flag("--precision", o.precision);
  commands.push_back(cost);
  return commands;
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
  out["hardware"] = options.memory.hardware;
  out["devices"] = SuggestDevices(options);
  out["slices"] = options.slices;
  out["precision"] = options.precision;
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
    item["dcn"] = AxisSizesJson(c.axis_names, c.dcn, /*skip_ones=*/true);
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
    item["headroom"] = e.memory.memory_per_device - worst.total;
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
