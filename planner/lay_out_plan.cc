#include "planner/lay_out_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "core/human.h"
#include "planner/layout_links.h"
#include "planner/logical_check.h"
#include "planner/redundant_compute.h"

namespace easyplan::planner {
namespace {

FindingCode CodeOf(SpecIssue::Kind kind) {
  switch (kind) {
    case SpecIssue::Kind::kUnknownAxis:
      return FindingCode::kUnknownAxis;
    case SpecIssue::Kind::kDuplicateAxis:
      return FindingCode::kDuplicateAxis;
    case SpecIssue::Kind::kTruncated:
      return FindingCode::kTruncatedSpec;
    case SpecIssue::Kind::kUnevenReplaced:
      return FindingCode::kUnevenReplaced;
    case SpecIssue::Kind::kIndivisible:
      return FindingCode::kIndivisible;
    case SpecIssue::Kind::kUnevenChunked:
      return FindingCode::kUnevenChunked;
  }
  return FindingCode::kIndivisible;
}

/// The spec laid out when the correction found errors (which are findings): entries naming unknown or
/// repeated axes and indivisible entries become None, so totals stay defined.
PartitionSpec LayableSpec(const CorrectedSpec& corrected, const Mesh& mesh) {
  std::vector<PartitionSpec::Entry> entries = corrected.spec.entries();
  for (const SpecIssue& issue : corrected.issues) {
    if (issue.kind == SpecIssue::Kind::kIndivisible && issue.dim >= 0 && issue.dim < static_cast<int>(entries.size())) {
      entries[static_cast<size_t>(issue.dim)].clear();
    }
  }
  std::set<std::string> seen;
  for (PartitionSpec::Entry& entry : entries) {
    bool bad = false;
    for (const std::string& axis : entry) {
      if (!mesh.AxisIndex(axis) || !seen.insert(axis).second) bad = true;
    }
    if (bad) entry.clear();
  }
  return PartitionSpec(std::move(entries));
}

/// Key of a layout group: tensors with equal keys are laid out identically.
struct GroupKey {
  std::vector<int64_t> shape;
  std::vector<PartitionSpec::Entry> spec;
  int bits;
  std::vector<std::string> expert_entry;
  int64_t expert_size;
  int64_t expert;
  bool has_expert;
  auto Tie() const { return std::tie(shape, spec, bits, expert_entry, expert_size, expert, has_expert); }
  bool operator<(const GroupKey& other) const { return Tie() < other.Tie(); }
};

/// One correction slot on this mesh: the corrected spec and what is laid out (on the rule shape).
struct SlotCorrection {
  CorrectedSpec corrected;
  PartitionSpec laid_out;
};

/// What planning one tensor produced, replayed for the later tensors of its kind: its plan entry and
/// the findings it was counted into.
struct TensorOutcome {
  ParamPlan param;
  std::vector<size_t> findings;          ///< positions in the FindingList
  bool replayable = true;                ///< false when a finding is keyed by this tensor's own name
  RedundantComputeCheck::Weight weight;  ///< what the redundant-compute check reads of the tensor
};

Status AccumulateBytes(int64_t& total, int64_t add, const std::string& what) {
  if (__builtin_add_overflow(total, add, &total)) {
    return Status::BadInput({}, what + ": per-device byte total overflows int64");
  }
  return Status();
}

Status AccumulateProduct(int64_t& total, int64_t count, int64_t bytes, const std::string& what) {
  int64_t product = 0;
  if (__builtin_mul_overflow(count, bytes, &product)) {
    return Status::BadInput({}, what + ": per-device byte total overflows int64");
  }
  return AccumulateBytes(total, product, what);
}

/// On a pipelined mesh a tensor's group is copied onto its stages (MeshPlanner::Staged), which can leave
/// the unstaged group it was copied from with no tensor (every tensor of llama's embedding lies on the
/// first stage): such groups are dropped, and the params' group indices follow.
void DropEmptyGroups(Plan& plan) {
  const auto empty = [](const LayoutGroup& group) { return group.tensors == 0; };
  if (std::none_of(plan.groups.begin(), plan.groups.end(), empty)) return;
  std::vector<int> index(plan.groups.size(), -1);
  std::vector<LayoutGroup> kept;
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    if (empty(plan.groups[g])) continue;
    index[g] = static_cast<int>(kept.size());
    kept.push_back(std::move(plan.groups[g]));
  }
  plan.groups = std::move(kept);
  for (ParamPlan& param : plan.params) param.group = index[static_cast<size_t>(param.group)];
}

/// Per-device totals: uniform groups add one constant; the others (experts held by some devices,
/// uneven chunks) are walked device by device.
Status AddDeviceTotals(Plan& plan) {
  int64_t uniform = 0;
  for (const LayoutGroup& group : plan.groups) {
    if (group.Uniform()) EP_RETURN_IF_ERROR(AccumulateProduct(uniform, group.tensors, group.MaxShardBytes(), "plan"));
  }
  const int64_t devices = plan.mesh.NumDevices();
  plan.device_bytes.assign(static_cast<size_t>(devices), uniform);
  // A group uniform on its stages adds one figure to each of its stages' devices.
  std::vector<int64_t> stage_bytes(static_cast<size_t>(plan.pipeline.stages), 0);
  int64_t pp_stride = 1;
  for (const LayoutGroup& group : plan.groups) {
    if (!group.Staged() || !group.UniformOnItsStages() || group.tensors == 0) continue;
    pp_stride = group.pp_stride;
    for (int64_t s = 0; s < plan.pipeline.stages; ++s) {
      if (group.stages.On(s)) {
        EP_RETURN_IF_ERROR(
            AccumulateProduct(stage_bytes[static_cast<size_t>(s)], group.tensors, group.MaxShardBytes(), "plan"));
      }
    }
  }
  if (plan.pipeline.pipelined()) {
    // Every device holds `uniform` so far, and a stage's devices come in runs of pp_stride ids: one sum per
    // stage, then filled run by run (suggest lays out thousands of pipelined meshes of 16,384 chips).
    std::vector<int64_t> stage_totals(stage_bytes.size(), uniform);
    for (size_t s = 0; s < stage_bytes.size(); ++s) {
      EP_RETURN_IF_ERROR(AccumulateBytes(stage_totals[s], stage_bytes[s], "plan"));
    }
    for (int64_t first = 0; first < devices; first += pp_stride) {
      const int64_t total = stage_totals[static_cast<size_t>(first / pp_stride % plan.pipeline.stages)];
      std::fill_n(plan.device_bytes.begin() + first, pp_stride, total);
    }
  }
  for (const LayoutGroup& group : plan.groups) {
    if (group.Uniform() || group.tensors == 0 || (group.Staged() && group.UniformOnItsStages())) continue;
    for (int64_t d = 0; d < devices; ++d) {
      EP_RETURN_IF_ERROR(
          AccumulateProduct(plan.device_bytes[static_cast<size_t>(d)], group.tensors, group.BytesOn(d), "plan"));
    }
  }
  return Status();
}

/// One LayOutPlan call: the mesh, the plan being filled and what it has learnt per correction and
/// group slot, so each is computed once per mesh.
class MeshPlanner {
 public:
  MeshPlanner(const TreeMatches& matches, const Mesh& mesh, UnevenMode uneven, const LayOutOptions& options, Plan& plan)
      : matches_(matches),
        rule_set_(matches.rules()),
        mesh_(mesh),
        uneven_(uneven),
        options_(options),
        plan_(plan),
        corrections_(matches.corrections().size()),
        group_of_slot_(static_cast<size_t>(matches.group_slots()), -1),
        compute_axes_(ComputeAxes(matches.config())) {}

  /// Plans tensor `t` from scratch into `outcome` (whose `param` the caller has zeroed).
  Status PlanTensor(size_t t, TensorOutcome& outcome) {
    const TensorEntry& tensor = matches_.tree().tensors[t];
    const LayoutLink* link = matches_.LinkOf(t);
    const TensorKind& kind = matches_.KindOf(t);
    ParamPlan& param = outcome.param;
    param.tensor = static_cast<int>(t);
    param.origin = kind.origin;
    param.rule = kind.rule;
    param.rule_case = kind.rule_case;
    param.spec = kind.spec;
    AddOriginFinding(tensor, link, outcome);

    // Correct on the rule-layout shape (where EasyDeL applies the spec), then map onto this tensor.
    const SlotCorrection& correction = Correction(kind.correction);
    const PartitionSpec& laid_out = correction.laid_out;
    param.effective = link && link->has_counterpart ? MapSpecThroughLink(laid_out, link->dim_of) : laid_out;
    param.issues = correction.corrected.issues;
    if (param.origin == SpecOrigin::kRule) {
      const int logical_dim = AddLogicalFinding(tensor, link, param, laid_out, outcome);
      AddIssueFindings(tensor, param, outcome, logical_dim);
      AddFusedFinding(tensor, link, param, laid_out, outcome);
    }
    EP_ASSIGN_OR_RETURN(param.group, GroupOf(kind, tensor, link, param.effective, laid_out));
    AddLargeReplicatedFinding(tensor, param, outcome);
    return Status();
  }

  /// The group of `group`'s tensors that live on `placement`'s stages only: a copy of the group whose
  /// devices are those stages' (one per group and placement).
  int Staged(int group, const StagePlacement& placement) {
    if (placement.Everywhere()) return group;
    auto [it, inserted] = staged_index_.try_emplace({group, placement}, static_cast<int>(plan_.groups.size()));
    if (inserted) {
      LayoutGroup staged = plan_.groups[static_cast<size_t>(group)];
      staged.tensors = 0;
      staged.stages = placement;
      const size_t pp = static_cast<size_t>(options_.pp_axis);
      staged.pp_size = mesh_.shape[pp];
      staged.pp_stride = mesh_.Stride(options_.pp_axis);
      plan_.groups.push_back(std::move(staged));
    }
    return it->second;
  }

  FindingList& findings() { return findings_; }

 private:
  void Add(TensorOutcome& outcome, Finding finding, int dim = -1, std::string_view axis = {}) {
    outcome.replayable = outcome.replayable && !FindingList::KeyedByTensor(finding);
    outcome.findings.push_back(findings_.Add(std::move(finding), dim, axis));
  }

  /// A tensor the rules do not place: only in this layout, or matched by no rule.
  void AddOriginFinding(const TensorEntry& tensor, const LayoutLink* link, TensorOutcome& outcome) {
    if (outcome.param.origin == SpecOrigin::kNoCounterpart) {
      Add(outcome, Finding{.code = FindingCode::kNoCounterpart,
                           .message = fmt::format("{} has no counterpart in the {} layout the rules are written for; "
                                                  "it is laid out replicated",
                                                  tensor.name, LayoutName(rule_set_.layout)),
                           .tensor = tensor.name,
                           .count = 1});
    } else if (outcome.param.origin == SpecOrigin::kUnmatched) {
      Add(outcome,
          Finding{.code = FindingCode::kUnmatchedTensor,
                  .message = "Partition rule not found for param: " + (link ? link->rule_name : tensor.name),
                  .tensor = tensor.name,
                  .count = 1,
                  .loc = SourceLoc{rule_set_.source, "", 0, 0},
                  .notes = {"add a rule that matches it, or a final catch-all {match: \".*\", spec: Replicated}"}});
    }
  }

  /// The correction of a (rule, rule shape) slot on this mesh, computed on first use.
  const SlotCorrection& Correction(int slot) {
    std::optional<SlotCorrection>& cached = corrections_[static_cast<size_t>(slot)];
    if (!cached) {
      const CorrectionSlot& key = matches_.corrections()[static_cast<size_t>(slot)];
      const PartitionSpec spec = key.rule >= 0 ? matches_.rule_specs()[static_cast<size_t>(key.rule)] : PartitionSpec();
      CorrectedSpec corrected = CorrectSpec(key.rule_shape, spec, mesh_, uneven_);
      PartitionSpec laid_out = corrected.HasError() ? LayableSpec(corrected, mesh_) : corrected.spec;
      cached = SlotCorrection{std::move(corrected), std::move(laid_out)};
    }
    return *cached;
  }

  /// Truncated specs, unknown / duplicate axes, uneven dims: one finding per issue, at the rule's line.
  /// An uneven `logical_dim` (a dim of the tensor whose count the axes do not divide) has its
  /// logical-indivisible error instead: the count, not the size, is what fails.
  void AddIssueFindings(const TensorEntry& tensor, const ParamPlan& param, TensorOutcome& outcome, int logical_dim) {
    const rules::Rule& rule = rule_set_.rules[static_cast<size_t>(param.rule)];
    for (const SpecIssue& issue : param.issues) {
      const bool uneven = issue.kind == SpecIssue::Kind::kUnevenReplaced ||
                          issue.kind == SpecIssue::Kind::kIndivisible || issue.kind == SpecIssue::Kind::kUnevenChunked;
      if (uneven && logical_dim >= 0 && issue.dim == logical_dim) continue;
      Add(outcome,
          Finding{.code = CodeOf(issue.kind),
                  .message = tensor.name + ": " + issue.message,
                  .tensor = tensor.name,
                  .count = 1,
                  .rule = param.rule,
                  .loc = rule.loc},
          issue.dim, issue.axis);
    }
  }

  /// Heads, kv heads, experts or vocabulary that the axes of their dim do not divide; returns the
  /// tensor dim it flagged, or -1.
  int AddLogicalFinding(const TensorEntry& tensor, const LayoutLink* link, const ParamPlan& param,
                        const PartitionSpec& laid_out, TensorOutcome& outcome) {
    if (!matches_.logical_dims()) return -1;
    int dim = -1;
    const std::string& match_name = link ? link->rule_name : tensor.name;
    const Shape& rule_shape = link ? link->rule_shape : tensor.shape;
    const PartitionSpec checked = CountedSpec(param.spec, laid_out, compute_axes_);
    if (auto finding = CheckLogicalDim(*matches_.logical_dims(), match_name, tensor.name, rule_shape, checked, mesh_,
                                       matches_.config(), &dim, link ? &link->dim_of : nullptr)) {
      finding->rule = param.rule;
      finding->loc = rule_set_.rules[static_cast<size_t>(param.rule)].loc;
      const int rule_dim = link && link->has_counterpart ? link->dim_of[static_cast<size_t>(dim)] : dim;
      if (rule_dim < checked.size() && IsVocabulary(match_name) && ReplicatedWhole(param, laid_out, rule_dim)) {
        MakeVocabReplicated(tensor, param, checked[rule_dim], *finding);
      }
      Add(outcome, std::move(*finding), dim);
      return dim;
    }
    return -1;
  }

  /// A fused dim (q|k|v in one projection) split into blocks that do not end on its parts' boundaries:
  /// a device holds the end of one part and the start of the next, so the model's slicing of the parts
  /// makes XLA reshard them, and a torch colwise rank would hold parts of two (issue 34, Phi-3 on tp=8).
  void AddFusedFinding(const TensorEntry& tensor, const LayoutLink* link, ParamPlan& param,
                       const PartitionSpec& laid_out, TensorOutcome& outcome) {
    if (!matches_.logical_dims()) return;
    const std::string& match_name = link ? link->rule_name : tensor.name;
    const rules::FusedDim* fused = matches_.logical_dims()->FindFused(match_name);
    if (fused == nullptr) return;
    const Shape& shape = link ? link->rule_shape : tensor.shape;
    const int dim = fused->dim < 0 ? shape.rank() + fused->dim : fused->dim;
    if (dim < 0 || dim >= shape.rank() || dim >= laid_out.size()) return;
    const int64_t blocks = EntrySize(laid_out[dim]);
    const int64_t size = shape[dim];
    if (blocks <= 1 || size % blocks != 0) return;  // an uneven dim is the uneven-dim findings' business
    const std::vector<int64_t> parts = rules::LogicalDims::FusedPartSizes(*fused, size, matches_.config());
    if (parts.empty()) return;
    const int64_t block = size / blocks;
    int64_t boundary = 0;
    for (size_t k = 0; k + 1 < parts.size(); ++k) {
      boundary += parts[k];
      if (boundary % block == 0) continue;
      param.fused_misaligned = true;
      // The message names the tensor's own dim (an HF tensor's dims are the rules' permuted).
      int own_dim = dim;
      if (link && link->has_counterpart) {
        const auto at = std::find(link->dim_of.begin(), link->dim_of.end(), dim);
        if (at != link->dim_of.end()) own_dim = static_cast<int>(at - link->dim_of.begin());
      }
      Finding finding = FusedFinding(tensor, *fused, parts, own_dim, laid_out[dim], block, boundary, k);
      finding.rule = param.rule;
      finding.loc = rule_set_.rules[static_cast<size_t>(param.rule)].loc;
      Add(outcome, std::move(finding), dim);
      return;
    }
  }

  Finding FusedFinding(const TensorEntry& tensor, const rules::FusedDim& fused, const std::vector<int64_t>& parts,
                       int dim, const PartitionSpec::Entry& entry, int64_t block, int64_t boundary, size_t part) const {
    std::vector<std::string> axes;
    for (const std::string& axis : entry) {
      if (const std::optional<int> index = mesh_.AxisIndex(axis)) {
        axes.push_back(fmt::format("{}={}", axis, mesh_.shape[static_cast<size_t>(*index)]));
      }
    }
    int64_t total = 0;
    for (int64_t p : parts) total += p;
    // The block counts that keep every boundary on a block edge (each block inside one part).
    std::vector<std::string> valid;
    for (int64_t blocks : Divisors(total)) {
      const int64_t edge = total / blocks;
      int64_t at = 0;
      bool aligned = true;
      for (size_t k = 0; k + 1 < parts.size(); ++k) aligned = aligned && (at += parts[k]) % edge == 0;
      if (aligned) valid.push_back(std::to_string(blocks));
      if (valid.size() == 8) break;
    }
    Finding finding;
    finding.code = FindingCode::kFusedMisaligned;
    finding.message = fmt::format(
        "{}: dim {} fuses {} ({}), and {} cuts it into blocks of {}: block {} holds the end of {} and the start of "
        "{}, so XLA reshards the parts after the model slices them apart",
        tensor.name, dim, fmt::join(fused.names, "|"), fmt::join(parts, "|"), fmt::join(axes, " x "), block,
        boundary / block, fused.names[part], fused.names[part + 1]);
    finding.tensor = tensor.name;
    finding.count = 1;
    finding.notes.push_back(fmt::format(
        "a torch colwise plan would give one rank parts of both {} and {}: `export --to torch` and `--to hf-tp-plan` "
        "refuse this tensor",
        fused.names[part], fused.names[part + 1]));
    finding.notes.push_back(fmt::format("block counts whose edges fall on the parts' boundaries: {}{}",
                                        fmt::join(valid, ", "), valid.size() == 8 ? ", ..." : ""));
    return finding;
  }

  /// The product of the mesh sizes of an entry's axes (axes the mesh lacks count 1: their own finding).
  int64_t EntrySize(const PartitionSpec::Entry& entry) const {
    int64_t size = 1;
    for (const std::string& axis : entry) {
      if (const std::optional<int> index = mesh_.AxisIndex(axis)) size *= mesh_.shape[static_cast<size_t>(*index)];
    }
    return size;
  }

  /// True when the counted dim of the tensor the rules see as `rule_name` counts vocabulary entries.
  bool IsVocabulary(const std::string& rule_name) const {
    const rules::LogicalDim* logical = matches_.logical_dims()->Find(rule_name);
    return logical != nullptr &&
           std::find(logical->count_keys.begin(), logical->count_keys.end(), "vocab_size") != logical->count_keys.end();
  }

  /// True when the uneven-dim correction left rule dim `dim` whole (--uneven replicate) rather than
  /// refusing it (--uneven error) or chunking it.
  static bool ReplicatedWhole(const ParamPlan& param, const PartitionSpec& laid_out, int dim) {
    if (dim < laid_out.size() && !laid_out[dim].empty()) return false;
    return std::none_of(param.issues.begin(), param.issues.end(), [dim](const SpecIssue& issue) {
      return issue.dim == dim && issue.kind == SpecIssue::Kind::kIndivisible;
    });
  }

  /// A vocabulary its axes do not divide is no error where the dim is replicated: EasyDeL replicates it
  /// and runs (eformer's correction), at the price of the bytes the axes would have split, which the
  /// finding gives beside the padded size that shards it (nanoGPT pads GPT-2's 50,257 entries to 50,304;
  /// Megatron-LM pads with --make-vocab-size-divisible-by).
  void MakeVocabReplicated(const TensorEntry& tensor, const ParamPlan& param, const PartitionSpec::Entry& counted,
                           Finding& finding) const {
    int64_t tiles = 1;
    for (const PartitionSpec::Entry& entry : param.effective.entries()) tiles *= EntrySize(entry);
    const int64_t product = EntrySize(counted);
    const int64_t bytes = ByteSize(tensor.shape.NumElements().value_or(0), DTypeBits(tensor.dtype)).value_or(0);
    const int64_t per_device = bytes / std::max<int64_t>(tiles, 1);
    const int64_t sharded = per_device / std::max<int64_t>(product, 1);
    finding.code = FindingCode::kVocabReplicated;
    finding.message += fmt::format(
        "; the dim is replicated, as EasyDeL runs it: {} of this tensor per device where {} would do ({} more)",
        HumanBytesBinary(per_device), HumanBytesBinary(sharded), HumanBytesBinary(per_device - sharded));
    for (std::string& note : finding.notes) {
      if (note.starts_with("or pad the vocabulary")) {
        note = "to shard it, pad the vocabulary" + note.substr(std::string_view("or pad the vocabulary").size()) +
               " (nanoGPT pads GPT-2's 50,257 entries to 50,304; Megatron-LM: --make-vocab-size-divisible-by)";
      }
    }
  }

  /// The layout group of a tensor: looked up once per group slot, then by the full key, so slots
  /// whose specs coincide on this mesh share a group.
  StatusOr<int> GroupOf(const TensorKind& kind, const TensorEntry& tensor, const LayoutLink* link,
                        const PartitionSpec& effective, const PartitionSpec& laid_out) {
    int& slot_group = group_of_slot_[static_cast<size_t>(kind.group_slot)];
    if (slot_group >= 0) return slot_group;
    GroupKey key{std::vector<int64_t>(tensor.shape.dims().begin(), tensor.shape.dims().end()),
                 effective.entries(),
                 DTypeBits(tensor.dtype),
                 {},
                 0,
                 -1,
                 false};
    // Per-expert tensors: the stacked expert dim's entry decides which devices hold this expert.
    if (link && link->has_counterpart && link->expert_dim >= 0) {
      key.has_expert = true;
      key.expert = link->expert;
      key.expert_size = link->rule_shape[link->expert_dim];
      if (link->expert_dim < laid_out.size()) key.expert_entry = laid_out[link->expert_dim];
    }
    auto [it, inserted] = group_index_.try_emplace(key, static_cast<int>(plan_.groups.size()));
    if (inserted) {
      EP_ASSIGN_OR_RETURN(LayoutGroup group, MakeGroup(key, tensor, effective));
      plan_.groups.push_back(std::move(group));
    }
    slot_group = it->second;
    return slot_group;
  }

  StatusOr<LayoutGroup> MakeGroup(const GroupKey& key, const TensorEntry& tensor, const PartitionSpec& effective) {
    auto layout = TensorLayout::Make(tensor.shape, effective, mesh_, uneven_);
    if (!layout.ok()) {
      // CorrectSpec removed whatever the layout rejects; a failure here is ours, not the user's.
      return Status::Internal(tensor.name + ": " + layout.status().diag().message);
    }
    LayoutGroup group{.layout = std::move(*layout), .bits = key.bits};
    if (!key.has_expert) return group;
    auto expert_layout = TensorLayout::Make(Shape{key.expert_size}, PartitionSpec({key.expert_entry}), mesh_, uneven_);
    if (!expert_layout.ok()) return Status::Internal(tensor.name + ": " + expert_layout.status().diag().message);
    group.expert_layout = std::move(*expert_layout);
    group.expert = key.expert;
    std::set<std::string> placed(key.expert_entry.begin(), key.expert_entry.end());
    for (const PartitionSpec::Entry& entry : effective.entries()) placed.insert(entry.begin(), entry.end());
    for (int a = 0; a < mesh_.rank(); ++a) {
      if (placed.count(mesh_.axis_names[static_cast<size_t>(a)]) == 0) {
        group.replica_axes.emplace_back(a, mesh_.shape[static_cast<size_t>(a)]);
      }
    }
    return group;
  }

  /// A large tensor held whole by every device while some mesh axis could split one of its dims.
  void AddLargeReplicatedFinding(const TensorEntry& tensor, const ParamPlan& param, TensorOutcome& outcome) {
    const LayoutGroup& group = plan_.groups[static_cast<size_t>(param.group)];
    const int64_t devices = mesh_.NumDevices();
    if (!param.effective.IsReplicated() || group.Replicas() != devices || devices <= 1) return;
    const int64_t bytes = group.MaxShardBytes();
    if (bytes < options_.large_replicated_bytes) return;
    std::string could;
    for (int a = 0; a < mesh_.rank() && could.empty(); ++a) {
      if (mesh_.shape[static_cast<size_t>(a)] <= 1) continue;
      for (int d = 0; d < tensor.shape.rank(); ++d) {
        if (tensor.shape[d] % mesh_.shape[static_cast<size_t>(a)] == 0) {
          could = fmt::format("'{}' (size {}) divides dim {} ({})", mesh_.axis_names[static_cast<size_t>(a)],
                              mesh_.shape[static_cast<size_t>(a)], d, tensor.shape[d]);
          break;
        }
      }
    }
    if (could.empty()) return;
    Finding finding{.code = FindingCode::kLargeReplicated,
                    .message = fmt::format("{} {} ({}) is fully replicated on all {} devices", tensor.name,
                                           tensor.shape.ToString(), HumanBytesBinary(bytes), devices),
                    .tensor = tensor.name,
                    .count = 1,
                    .rule = param.rule,
                    .notes = {"mesh axis " + could + ": a rule giving that dim the axis would split it"}};
    if (param.rule >= 0) finding.loc = rule_set_.rules[static_cast<size_t>(param.rule)].loc;
    Add(outcome, std::move(finding));
  }

  const TreeMatches& matches_;
  const rules::RuleSet& rule_set_;
  const Mesh& mesh_;
  const UnevenMode uneven_;
  const LayOutOptions& options_;
  Plan& plan_;
  FindingList findings_;
  std::vector<std::optional<SlotCorrection>> corrections_;  // by correction slot
  std::vector<int> group_of_slot_;                          // by group slot; -1 = not seen yet
  const std::vector<std::string> compute_axes_;             ///< ComputeAxes of the config
  std::map<GroupKey, int> group_index_;
  std::map<std::pair<int, StagePlacement>, int> staged_index_;
};

}  // namespace

Status CheckMeshSize(const Mesh& mesh, int64_t max_devices) {
  const int64_t devices = mesh.NumDevices();
  if (devices > max_devices) {
    return Status::BadInput({}, fmt::format("the mesh has {} devices, more than the limit of {} (raise --max-devices)",
                                            WithThousands(devices), WithThousands(max_devices)));
  }
  return Status();
}

StatusOr<Plan> LayOutPlan(const TreeMatches& matches, const Mesh& mesh, UnevenMode uneven,
                          const LayOutOptions& options) {
  EP_RETURN_IF_ERROR(CheckMeshSize(mesh, options.max_devices));
  const ParamTree& tree = matches.tree();
  Plan plan;
  plan.mesh = mesh;
  plan.uneven = uneven;
  plan.rule_hits = matches.rule_hits();
  plan.rule_matches = matches.rule_matches();
  if (options.keep_params) plan.params.reserve(tree.tensors.size());
  MeshPlanner planner(matches, mesh, uneven, options, plan);
  const bool pipelined = options.pipeline.pipelined();
  if (pipelined) {
    if (options.pp_axis < 0 || options.pp_axis >= mesh.rank() ||
        mesh.shape[static_cast<size_t>(options.pp_axis)] != options.pipeline.stages ||
        options.placements.size() != tree.tensors.size()) {
      return Status::Internal("LayOutPlan: the pipeline's stages, pp axis and placements disagree with the mesh");
    }
    plan.pipeline = options.pipeline;
  }

  // Tensors in tree order, so findings come in the order of their first tensor; a kind is planned
  // at its first tensor and replayed for the rest (unless a finding names that tensor alone).
  std::vector<std::optional<TensorOutcome>> outcomes(matches.kinds().size());
  RedundantComputeCheck redundant(mesh, matches.config());
  for (size_t t = 0; t < tree.tensors.size(); ++t) {
    // On a pipelined mesh the tensor's group is the copy on its stages; a replayed kind keeps its
    // unstaged group, since tensors of one kind sit on different stages.
    const StagePlacement placement = pipelined ? options.placements[t] : StagePlacement();
    std::optional<TensorOutcome>& replay = outcomes[static_cast<size_t>(matches.KindIndexOf(t))];
    if (replay) {
      redundant.Add(tree.tensors[t].name, replay->weight);
      for (size_t position : replay->findings) planner.findings().Recount(position, 1);
      const int group = planner.Staged(replay->param.group, placement);
      ++plan.groups[static_cast<size_t>(group)].tensors;
      if (options.keep_params) {
        ParamPlan& param = plan.params.emplace_back(replay->param);
        param.tensor = static_cast<int>(t);
        param.group = group;
      }
      continue;
    }
    TensorOutcome outcome;
    EP_RETURN_IF_ERROR(planner.PlanTensor(t, outcome));
    outcome.weight =
        redundant.Classify(tree.tensors[t].shape, outcome.param.effective,
                           plan.groups[static_cast<size_t>(outcome.param.group)].expert_layout.has_value());
    redundant.Add(tree.tensors[t].name, outcome.weight);
    const int group = planner.Staged(outcome.param.group, placement);
    ++plan.groups[static_cast<size_t>(group)].tensors;
    if (options.keep_params) plan.params.emplace_back(outcome.param).group = group;
    if (outcome.replayable && matches.KindOf(t).tensors > 1) replay = std::move(outcome);
  }

  DropEmptyGroups(plan);
  EP_RETURN_IF_ERROR(AddDeviceTotals(plan));
  for (const Finding& finding : matches.rule_findings()) planner.findings().Add(finding);
  for (Finding& finding : redundant.Findings()) planner.findings().Add(std::move(finding));
  plan.findings = planner.findings().Take();
  if (matches.rules().builtin) {
    // A built-in table carries generic rules (biases, a classification head's score) that many models
    // never use: the user did not write them, so they are notes. A user's own rule file keeps the warning.
    for (Finding& finding : plan.findings) {
      if (finding.code == FindingCode::kDeadRule || finding.code == FindingCode::kShadowedRule) {
        finding.severity = Severity::kNote;
      }
    }
    std::stable_sort(plan.findings.begin(), plan.findings.end(), [](const Finding& a, const Finding& b) {
      return static_cast<int>(a.severity) > static_cast<int>(b.severity);
    });
  }
  return plan;
}

}  // namespace easyplan::planner
