#include "api/suggest.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>

#include "api/memory_pipeline.h"
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

int64_t WorstTotal(const Candidate& c) {
  return c.estimate.memory.devices[static_cast<size_t>(c.estimate.memory.worst)].total;
}

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
  EP_RETURN_IF_ERROR(CheckMemoryOptions(options.memory));
  if (options.memory.hardware.empty()) {
    return Status::BadInput({}, "--hardware is required: candidates are ranked by their step time on it",
                            {"e.g. --hardware tpu-v5p, --hardware h100-sxm, or a profile file (docs/COST.md)"});
  }
  if (SuggestDevices(options) < 1) {
    return Status::BadInput({}, "--devices is required: the chips to lay the model out on", {"e.g. --devices 256"});
  }
  if (SuggestDevices(options) > options.plan.max_devices) {
    return Status::BadInput({}, fmt::format("--devices {} is more than --max-devices {}", SuggestDevices(options),
                                            options.plan.max_devices));
  }
  if (options.slices < 1 || SuggestDevices(options) % options.slices != 0) {
    return Status::BadInput(
        {}, fmt::format("--slices {} does not divide --devices {}", options.slices, SuggestDevices(options)),
        {"each slice (or node) holds devices / slices chips"});
  }
  if (options.top < 1) return Status::BadInput({}, "--top must be at least 1");
  if (options.max_microbatches < 1) return Status::BadInput({}, "--max-microbatches must be at least 1");
  if (!options.plan.mesh.empty() || !options.plan.dcn.empty()) {
    return Status::BadInput({}, "suggest chooses the mesh: --mesh and --dcn do not apply",
                            {"use --slices K for K slices or nodes; `cost --mesh ...` prices one mesh"});
  }
  if (options.decode && options.memory.mode != "serve") {
    return Status::BadInput({}, "--decode prices one decode step: it needs --mode serve");
  }
  CostOptions cost;
  cost.plan = options.plan;
  cost.memory = options.memory;
  cost.decode = options.decode;
  return CheckCostOptions(cost);
}

StatusOr<SuggestResult> Suggest(const std::shared_ptr<const Model>& model, const SuggestOptions& given) {
  // --devices is a config option: the Model's own when the caller's options do not repeat it (Python).
  SuggestOptions options = given;
  if (!options.plan.config.devices) options.plan.config.devices = model->options().devices;
  EP_RETURN_IF_ERROR(CheckSuggestOptions(options));
  if (!model->has_config()) return Status::BadInput({}, "suggest needs CONFIG");
  std::string budget_label;
  EP_ASSIGN_OR_RETURN(const int64_t budget, MemoryBudget(*model, options.memory, &budget_label));
  EP_ASSIGN_OR_RETURN(const planner::HardwareProfile* hardware, model->Hardware(options.memory.hardware));
  EP_ASSIGN_OR_RETURN(const schemas::ModelDims dims, schemas::ModelDimsOf(model->resolved()));
  const Json& config = model->config();
  const planner::ParallelAxisNames parallel = planner::ParallelAxisNamesOf(config);
  const planner::ExpertBinding binding = planner::ExpertBindingOf(config);

  // The mesh axes, in the config's order (EasyDeL's sharding_axis_names).
  std::vector<std::string> names;
  for (const Json& name : config.value("sharding_axis_names", Json::array())) {
    if (name.is_string()) names.push_back(name.get<std::string>());
  }
  if (names.empty()) names = {"dp", "fsdp", "ep", "tp", "sp"};
  const bool moe = dims.experts > 0;
  std::vector<bool> fixed_one(names.size(), false);
  for (size_t k = 0; k < names.size(); ++k) fixed_one[k] = names[k] == parallel.ep && !moe;
  std::vector<std::vector<int64_t>> meshes;
  std::vector<int64_t> scratch;
  Factorizations(SuggestDevices(options), names.size(), fixed_one, scratch, meshes);
  // --slices: K's factors placed on the outer data axes (dp, then fsdp), as --dcn places them.
  std::vector<size_t> outer;
  for (size_t k = 0; k < names.size(); ++k) {
    if (names[k] == parallel.dp || names[k] == parallel.fsdp) outer.push_back(k);
  }
  std::vector<std::vector<int64_t>> dcn_splits;
  if (options.slices == 1 || outer.empty()) {
    dcn_splits.push_back(std::vector<int64_t>(names.size(), 1));
  } else {
    std::vector<std::vector<int64_t>> splits;
    std::vector<int64_t> current;
    Factorizations(options.slices, outer.size(), std::vector<bool>(outer.size(), false), current, splits);
    for (const std::vector<int64_t>& split : splits) {
      std::vector<int64_t> dcn(names.size(), 1);
      for (size_t i = 0; i < outer.size(); ++i) dcn[outer[i]] = split[i];
      dcn_splits.push_back(dcn);
    }
  }
  std::vector<std::string> rule_sets = {"builtin"};
  for (const std::string& file : options.rules) rule_sets.push_back(file);
  const bool train = options.memory.mode == "train";
  const int64_t batch = *options.memory.batch, seq = *options.memory.seq;

  const int64_t per_mesh = static_cast<int64_t>(rule_sets.size()) * (train ? std::size(kPolicies) : 1);

  // The meshes are independent: each worker takes every `workers`-th one into its own partial result
  // (a Model is safe to share between threads), and the merge below sorts them into one ranking.
  struct Partial {
    std::vector<Candidate> ranked;
    std::map<std::string, int64_t> rejected;
    int64_t considered = 0;
    std::vector<std::optional<StepModel>> step_models;
    Status status;
  };
  auto search = [&](size_t worker, size_t workers, Partial& part) -> Status {
    part.step_models.resize(rule_sets.size());
    auto reject = [&](const std::string& reason, int64_t count) { part.rejected[reason] += count; };
    for (size_t i = worker; i < meshes.size(); i += workers) {
      const std::vector<int64_t>& sizes = meshes[i];
      // What EasyDeL rejects before it builds anything.
      const int64_t head_tiles = Tiles(names, sizes, dims.axes.head);
      const int64_t batch_tiles = Tiles(names, sizes, dims.axes.batch);
      const int64_t seq_tiles = Tiles(names, sizes, dims.axes.sequence);
      const int64_t count = per_mesh * static_cast<int64_t>(dcn_splits.size());
      part.considered += count;
      if (dims.heads > 0 && dims.heads % head_tiles != 0) {
        reject("heads not divisible by the head axes", count);
        continue;
      }
      if (dims.kv_heads > 0 && dims.kv_heads % head_tiles != 0) {
        reject("kv heads not divisible by the head axes", count);
        continue;
      }
      if (batch % batch_tiles != 0) {
        reject("batch not divisible by the batch axes", count);
        continue;
      }
      if (!options.decode && seq % seq_tiles != 0) {
        reject("sequence not divisible by the sequence axes", count);
        continue;
      }
      if (moe) {
        Mesh probe{names, sizes, {}};
        const planner::ExpertMesh folded = planner::FoldExpertMesh(probe, parallel, binding);
        const int64_t shards = folded.shape[planner::ExpertMesh::kEp];
        if (shards > 1 && dims.experts % shards != 0) {
          reject("experts not divisible by the folded expert axis", count);
          continue;
        }
      }
      for (int64_t dcn_index = 0; dcn_index < static_cast<int64_t>(dcn_splits.size()); ++dcn_index) {
        const std::vector<int64_t>& dcn = dcn_splits[static_cast<size_t>(dcn_index)];
        bool placed = true;
        for (size_t k = 0; k < names.size(); ++k) placed = placed && sizes[k] % dcn[k] == 0;
        if (!placed) {
          reject("slices not placeable on dp x fsdp", per_mesh);
          continue;
        }
        Candidate shape;
        shape.axis_names = names;
        shape.mesh = sizes;
        shape.dcn = dcn;
        for (size_t r = 0; r < rule_sets.size(); ++r) {
          const int64_t policies = train ? static_cast<int64_t>(std::size(kPolicies)) : 1;
          PlanOptions plan_options = options.plan;
          plan_options.rules = rule_sets[r];
          plan_options.mesh = shape.MeshFlag();
          plan_options.dcn = shape.DcnFlag();
          EP_ASSIGN_OR_RETURN(PlanInputs inputs, PreparePlan(model, plan_options));
          EP_ASSIGN_OR_RETURN(planner::Plan plan, inputs.Build());
          if (plan.HasErrors()) {
            const planner::Finding* first = nullptr;
            for (const planner::Finding& f : plan.findings) {
              if (f.severity == Severity::kError) {
                first = &f;
                break;
              }
            }
            reject(fmt::format("plan error [{}]", planner::FindingCodeName(first->code)), policies);
            continue;
          }
          if (!part.step_models[r]) {
            EP_ASSIGN_OR_RETURN(part.step_models[r], StepModelOf(inputs, plan));
          }
          // One activation plan and one dry run per microbatch size, shared by every policy.
          std::map<int64_t, kernels::DryRunReport> runs;
          std::map<int64_t, StepActivations> activations;
          for (int64_t p = 0; p < policies; ++p) {
            StepSettings settings;
            settings.mode = train ? planner::MemoryMode::kTrain : planner::MemoryMode::kServe;
            settings.decode = options.decode;
            settings.batch = batch;
            settings.seq = seq;
            settings.policy = train ? kPolicies[p] : planner::CheckpointPolicy::kNone;
            // The fewest microbatches whose step fits.
            std::optional<planner::MemoryReport> fitting;
            const int64_t max_micro = train ? options.max_microbatches : 1;
            for (int64_t m = 1; m <= max_micro && m <= batch; ++m) {
              if (batch % m != 0 || (batch / m) % batch_tiles != 0) continue;
              settings.microbatches = m;
              const MemoryOptions step_memory = StepMemoryOptions(options.memory, settings);
              auto step = activations.find(m);
              if (step == activations.end()) {
                EP_ASSIGN_OR_RETURN(StepActivations built, BuildStepActivations(inputs, step_memory));
                step = activations.emplace(m, std::move(built)).first;
              }
              EP_ASSIGN_OR_RETURN(planner::MemoryReport report,
                                  BuildMemoryReport(inputs, plan, step_memory, budget, settings.policy, &step->second));
              if (report.fits) {
                fitting = std::move(report);
                break;
              }
            }
            if (!fitting) {
              reject("does not fit at any microbatch count", 1);
              continue;
            }
            auto run = runs.find(settings.microbatches);
            if (run == runs.end()) {
              StatusOr<kernels::DryRunReport> made = DryRunStep(inputs, plan, *part.step_models[r], settings);
              if (!made.ok()) {
                reject("uneven layout the step-time model cannot price", policies - p);
                break;
              }
              run = runs.emplace(settings.microbatches, std::move(*made)).first;
            }
            Candidate candidate = shape;
            candidate.order = ((static_cast<int64_t>(i) * static_cast<int64_t>(dcn_splits.size()) + dcn_index) *
                                   static_cast<int64_t>(rule_sets.size()) +
                               static_cast<int64_t>(r)) *
                                  static_cast<int64_t>(std::size(kPolicies)) +
                              p;
            candidate.rules = rule_sets[r];
            candidate.policy = settings.policy;
            candidate.microbatches = settings.microbatches;
            EP_ASSIGN_OR_RETURN(candidate.estimate,
                                EstimateStep(inputs, plan, *part.step_models[r], *hardware, options.memory, budget,
                                             settings, &*fitting, &run->second));
            part.ranked.push_back(std::move(candidate));
          }
        }
      }
    }
    return Status();
  };
  const size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::vector<Partial> parts(std::min(workers, std::max<size_t>(meshes.size(), 1)));
  std::vector<std::thread> threads;
  for (size_t w = 1; w < parts.size(); ++w) {
    threads.emplace_back([&, w] { parts[w].status = search(w, parts.size(), parts[w]); });
  }
  parts[0].status = search(0, parts.size(), parts[0]);
  for (std::thread& t : threads) t.join();
  SuggestResult result;
  result.model_type = model->model_type();
  for (Partial& part : parts) {
    EP_RETURN_IF_ERROR(part.status);
    result.considered += part.considered;
    for (const auto& [reason, count] : part.rejected) result.rejected[reason] += count;
    for (Candidate& c : part.ranked) result.ranked.push_back(std::move(c));
  }
  std::stable_sort(result.ranked.begin(), result.ranked.end(), [](const Candidate& a, const Candidate& b) {
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

std::vector<std::string> ReproduceCommands(const SuggestOptions& o, const Candidate& c) {
  std::string common = ShellWord(o.plan.config.config.empty() ? "CONFIG" : o.plan.config.config);
  for (const std::string& set : o.plan.config.sets) common += " --set " + ShellWord(set);
  if (c.rules != "builtin") common += " --rules " + ShellWord(c.rules);
  common += " --mesh " + c.MeshFlag();
  if (!c.DcnFlag().empty()) common += " --dcn " + c.DcnFlag();
  std::string step = " --hardware " + ShellWord(o.memory.hardware) + " --mode " + o.memory.mode;
  const std::string remat = PolicyFlagValue(c.policy);
  const bool train = o.memory.mode == "train";
  if (train) step += " --set gradient_checkpointing=" + (remat.empty() ? std::string("''") : remat);
  const int64_t micro_batch = *o.memory.batch / c.microbatches;
  const std::string seq = " --seq " + std::to_string(*o.memory.seq);
  std::vector<std::string> commands;
  commands.push_back("easyplan plan " + common);
  commands.push_back("easyplan memory " + common + step + " --batch " + std::to_string(micro_batch) + seq);
  std::string cost = "easyplan cost " + common + step + " --batch " + std::to_string(*o.memory.batch) + seq;
  if (c.microbatches > 1) cost += " --microbatches " + std::to_string(c.microbatches);
  if (o.decode) cost += " --decode";
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
    Json mesh = Json::object(), dcn = Json::object();
    for (size_t k = 0; k < c.axis_names.size(); ++k) {
      mesh[c.axis_names[k]] = c.mesh[k];
      if (c.dcn[k] > 1) dcn[c.axis_names[k]] = c.dcn[k];
    }
    item["mesh"] = std::move(mesh);
    item["dcn"] = std::move(dcn);
    item["gradient_checkpointing"] = PolicyFlagValue(c.policy);
    item["microbatches"] = c.microbatches;
    item["rules"] = c.rules;
    item["step_time_s"] = e.step.step_time_s;
    item["tokens_per_s"] = e.tokens_per_s;
    item["tokens_per_s_per_device"] = e.tokens_per_s_per_device;
    item["mfu"] = e.mfu;
    item["compute_s"] = e.step.compute_s;
    item["recompute_s"] = e.step.recompute_s;
    item["communication_s"] = e.step.communication_s;
    item["exposed_communication_s"] = e.step.exposed_communication_s;
    item["fits"] = e.fits;
    const planner::DeviceMemory& worst = e.memory.devices[static_cast<size_t>(e.memory.worst)];
    item["memory_total"] = worst.total;
    item["headroom"] = e.memory.memory_per_device - worst.total;
    Json forward = Json::object();
    forward["all_gather"] = e.step.forward.all_gather;
    forward["reduce_scatter"] = e.step.forward.reduce_scatter;
    forward["all_reduce"] = e.step.forward.all_reduce;
    forward["all_to_all"] = e.step.forward.all_to_all;
    item["forward_communication"] = std::move(forward);
    Json commands = Json::array();
    for (const std::string& command : ReproduceCommands(options, c)) commands.push_back(command);
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
  return out;
}

}  // namespace easyplan::api
