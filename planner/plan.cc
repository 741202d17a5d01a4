#include "planner/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/flat_string_map.h"
#include "core/human.h"
#include "planner/logical_check.h"
#include "rules/match_memo.h"
#include "schemas/expression.h"

namespace easyplan::planner {
namespace {

/// The spec of `tensor_spec` laid on a tensor whose dims come from the rule tensor's dims `dim_of`.
PartitionSpec MapSpec(const PartitionSpec& rule_spec, const std::vector<int>& dim_of) {
  std::vector<PartitionSpec::Entry> entries;
  entries.reserve(dim_of.size());
  for (int source : dim_of) {
    entries.push_back(source < rule_spec.size() ? rule_spec[source] : PartitionSpec::Entry{});
  }
  // Trailing None entries carry no information; keep the mapped spec as short as the rule's.
  while (!entries.empty() && entries.back().empty() && static_cast<int>(entries.size()) > rule_spec.size()) {
    entries.pop_back();
  }
  return PartitionSpec(std::move(entries));
}

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

/// What planning one tensor produced, replayed for later tensors that nothing in the plan can tell
/// apart from it (see OutcomeKey): its plan entry, the rules its name matched and the findings it
/// was counted into.
struct TensorOutcome {
  ParamPlan param;
  std::vector<int> matches;
  std::vector<size_t> findings;  ///< positions in the FindingList
  bool replayable = true;        ///< false when a finding is keyed by this tensor's own name
};

/// Writes into `key` what a tensor's plan depends on besides the plan-wide inputs: the name the rules
/// see, as its number shape (used only when no rule or logical-dim pattern can tell the digits of a
/// number apart), the tensor's shape and dtype, and its layout link. A model's 92k tensors have a few
/// hundred keys.
void OutcomeKey(std::string_view match_name, const TensorEntry& tensor, const LayoutLink* link, std::string* key) {
  rules::NumberShapeInto(match_name, key);
  // The fixed-size fields are written in place after one resize: an append per field cost more than
  // the lookup it keys (this runs once per tensor).
  const auto shape_bytes = [](const Shape& shape) { return sizeof(int32_t) + sizeof(int64_t) * shape.dims().size(); };
  size_t extra = shape_bytes(tensor.shape) + sizeof(int32_t) + sizeof(bool) + sizeof(size_t);
  if (link) {
    extra += sizeof(bool) + shape_bytes(link->rule_shape) + sizeof(int64_t) + sizeof(int) * link->dim_of.size() +
             sizeof(link->expert_dim) + sizeof(link->expert);
  }
  const size_t start = key->size();
  key->resize(start + extra);
  char* out = key->data() + start;
  const auto put = [&out](auto value) {
    std::memcpy(out, &value, sizeof(value));
    out += sizeof(value);
  };
  const auto put_shape = [&put](const Shape& shape) {
    put(static_cast<int32_t>(shape.rank()));
    for (int64_t dim : shape.dims()) put(dim);
  };
  put_shape(tensor.shape);
  put(static_cast<int32_t>(DTypeBits(tensor.dtype)));
  put(link != nullptr);
  if (link) {
    put(link->has_counterpart);
    put_shape(link->rule_shape);
    put(static_cast<int64_t>(link->dim_of.size()));
    for (int dim : link->dim_of) put(dim);
    put(link->expert_dim);
    put(link->expert);
  }
  put(match_name.size());  // last, so the name's end is never ambiguous
}

/// Devices holding `group`'s tensors only on some devices (experts) or unevenly (chunks).
bool NeedsPerDevice(const LayoutGroup& group) { return !group.Uniform(); }

Status CheckedAdd(int64_t& total, int64_t add, const std::string& what) {
  if (__builtin_add_overflow(total, add, &total)) {
    return Status::BadInput({}, what + ": per-device byte total overflows int64");
  }
  return Status();
}

Status CheckedMulAdd(int64_t& total, int64_t count, int64_t bytes, const std::string& what) {
  int64_t product = 0;
  if (__builtin_mul_overflow(count, bytes, &product)) {
    return Status::BadInput({}, what + ": per-device byte total overflows int64");
  }
  return CheckedAdd(total, product, what);
}

}  // namespace

bool LayoutGroup::HeldBy(int64_t device) const {
  if (!expert_layout) return true;
  const Range held = expert_layout->SliceOf(device)[0];
  return expert >= held.first && expert < held.second;
}

int64_t LayoutGroup::BytesOn(int64_t device) const {
  if (!HeldBy(device)) return 0;
  return ByteSize(layout.ElementsOn(device), bits).value_or(0);
}

int64_t LayoutGroup::ReplicaIdOn(int64_t device, const Mesh& mesh) const {
  if (!expert_layout) return layout.ReplicaId(device);
  const std::vector<int64_t> coords = mesh.Coordinates(device);
  int64_t id = 0;
  for (const auto& [axis, size] : replica_axes) id = id * size + coords[static_cast<size_t>(axis)];
  return id;
}

int64_t LayoutGroup::Replicas() const {
  if (!expert_layout) return layout.replicas();
  // The expert axes do not appear in the per-expert spec, so the layout counts them as replication;
  // only the devices of the expert's block hold it.
  const int64_t tiles = expert_layout->tiles()[0];
  return tiles > 0 ? layout.replicas() / tiles : layout.replicas();
}

int64_t LayoutGroup::MaxShardBytes() const {
  return ByteSize(layout.shard_shape().NumElements().value_or(0), bits).value_or(0);
}

bool LayoutGroup::Uniform() const { return layout.even() && !(expert_layout && expert_layout->tiles()[0] > 1); }

bool Plan::HasErrors() const {
  return std::any_of(findings.begin(), findings.end(), [](const Finding& f) { return f.severity == Severity::kError; });
}

StatusOr<PartitionSpec> ResolveRuleSpec(const rules::Rule& rule, const rules::Presets& presets, const Json& config,
                                        int* case_index, std::vector<std::string>* trace) {
  const rules::SpecSource* source = &rule.spec;
  if (case_index) *case_index = -1;
  for (size_t i = 0; i < rule.cases.size(); ++i) {
    auto holds = rule.cases[i].when.Evaluate(config);
    if (!holds.ok()) {
      return Status::BadInput(rule.loc, "rule '" + rule.pattern + "': case condition '" + rule.cases[i].when.text() +
                                            "': " + holds.status().diag().message);
    }
    if (schemas::IsTruthy(*holds)) {
      source = &rule.cases[i].spec;
      if (case_index) *case_index = static_cast<int>(i);
      if (trace) trace->push_back("case '" + rule.cases[i].when.text() + "' holds: spec " + source->text);
      break;
    }
  }
  auto spec = presets.Resolve(*source, config, rules::AxisMode::kTrain, trace);
  if (!spec.ok()) {
    Status status = spec.status();
    Diag& diag = status.mutable_diag();
    diag.message = "rule '" + rule.pattern + "' spec " + source->text + ": " + diag.message;
    diag.loc = rule.loc;
    return status;
  }
  return spec;
}

StatusOr<Plan> BuildPlan(const PlanRequest& request) {
  if (!request.tree || !request.rules || !request.presets || !request.config) {
    return Status::Internal("BuildPlan: incomplete request");
  }
  const ParamTree& tree = *request.tree;
  const rules::RuleSet& rule_set = *request.rules;
  const Mesh& mesh = request.mesh;
  const int64_t devices = mesh.NumDevices();
  if (devices > request.max_devices) {
    return Status::BadInput({}, fmt::format("the mesh has {} devices, more than the limit of {} (raise --max-devices)",
                                            WithThousands(devices), WithThousands(request.max_devices)));
  }
  if (!request.links.empty() && request.links.size() != tree.tensors.size()) {
    return Status::Internal("BuildPlan: one layout link per tensor expected");
  }

  // Every rule's spec resolves once: it depends on the rule and the config, never on the tensor.
  std::vector<PartitionSpec> rule_specs;
  std::vector<int> rule_cases;
  for (const rules::Rule& rule : rule_set.rules) {
    int chosen = -1;
    EP_ASSIGN_OR_RETURN(PartitionSpec spec, ResolveRuleSpec(rule, *request.presets, *request.config, &chosen, nullptr));
    rule_specs.push_back(std::move(spec));
    rule_cases.push_back(chosen);
  }
  EP_ASSIGN_OR_RETURN(std::unique_ptr<rules::RuleMatcher> matcher, rules::RuleMatcher::Build(rule_set));
  // Layers and experts repeat a few dozen names with different numbers: match each digit shape once.
  rules::MatchMemo match_memo(*matcher, rule_set);

  Plan plan;
  plan.mesh = mesh;
  plan.uneven = request.uneven;
  plan.rule_hits.assign(rule_set.rules.size(), 0);
  plan.rule_matches.assign(rule_set.rules.size(), 0);
  if (request.keep_params) plan.params.reserve(tree.tensors.size());
  FindingList findings;
  std::map<GroupKey, int> group_index;
  std::unordered_map<std::string, CorrectedSpec> corrections;  // by (rule shape, rule index)
  std::unordered_map<std::string, int> group_by_fast_key;
  std::string correction_key, fast_key;  // reused: a key per tensor without an allocation per tensor

  // Plans tensor t from scratch, recording in `outcome` what a tensor with the same key replays.
  const auto plan_tensor = [&](size_t t, TensorOutcome& outcome) -> Status {
    const TensorEntry& tensor = tree.tensors[t];
    const LayoutLink* link = request.links.empty() ? nullptr : &request.links[t];
    ParamPlan& param = outcome.param;
    param.tensor = static_cast<int>(t);
    const auto add_finding = [&](Finding finding, int dim = -1, std::string_view axis = {}) {
      outcome.replayable = outcome.replayable && !FindingList::KeyedByTensor(finding);
      outcome.findings.push_back(findings.Add(std::move(finding), dim, axis));
    };

    const std::string& match_name = link ? link->rule_name : tensor.name;
    const Shape& rule_shape = link ? link->rule_shape : tensor.shape;
    PartitionSpec rule_spec;  // on rule_shape's dims
    if (link && !link->has_counterpart) {
      param.origin = SpecOrigin::kNoCounterpart;
      add_finding(Finding{.code = FindingCode::kNoCounterpart,
                          .message = fmt::format("{} has no counterpart in the {} layout the rules are written for; "
                                                 "it is laid out replicated",
                                                 tensor.name, LayoutName(rule_set.layout)),
                          .tensor = tensor.name,
                          .count = 1});
    } else if (rule_shape.rank() == 0) {
      param.origin = SpecOrigin::kScalar;  // eformer: scalars get P() before any rule is tried
    } else {
      const std::vector<int>& matches = match_memo.AllMatches(match_name);
      outcome.matches = matches;
      if (matches.empty()) {
        param.origin = SpecOrigin::kUnmatched;
        add_finding(Finding{.code = FindingCode::kUnmatchedTensor,
                            .message = "Partition rule not found for param: " + match_name,
                            .tensor = tensor.name,
                            .count = 1,
                            .loc = SourceLoc{rule_set.source, "", 0, 0},
                            .notes = {"add a rule that matches it, or a final catch-all {match: \".*\", spec: "
                                      "Replicated}"}});
      } else {
        param.origin = SpecOrigin::kRule;
        param.rule = matches.front();
        param.rule_case = rule_cases[static_cast<size_t>(param.rule)];
        rule_spec = rule_specs[static_cast<size_t>(param.rule)];
      }
    }

    // Correct on the rule-layout shape (where EasyDeL applies the spec), then map onto this tensor.
    // The correction depends only on (rule, shape): thousands of layers share a handful of results.
    correction_key.assign(reinterpret_cast<const char*>(rule_shape.dims().data()),
                          rule_shape.dims().size() * sizeof(int64_t));
    correction_key.append(reinterpret_cast<const char*>(&param.rule), sizeof(param.rule));
    auto cached = corrections.find(correction_key);
    if (cached == corrections.end()) {
      cached = corrections.emplace(correction_key, CorrectSpec(rule_shape, rule_spec, mesh, request.uneven)).first;
    }
    const CorrectedSpec& corrected = cached->second;
    param.spec = link && link->has_counterpart ? MapSpec(rule_spec, link->dim_of) : rule_spec;
    PartitionSpec effective_rule = corrected.HasError() ? LayableSpec(corrected, mesh) : corrected.spec;
    param.effective = link && link->has_counterpart ? MapSpec(effective_rule, link->dim_of) : effective_rule;
    if (param.origin == SpecOrigin::kRule) {
      const rules::Rule& rule = rule_set.rules[static_cast<size_t>(param.rule)];
      for (const SpecIssue& issue : corrected.issues) {
        add_finding(Finding{.code = CodeOf(issue.kind),
                            .message = tensor.name + ": " + issue.message,
                            .tensor = tensor.name,
                            .count = 1,
                            .rule = param.rule,
                            .loc = rule.loc},
                    issue.dim, issue.axis);
      }
    }
    if (request.logical_dims && param.origin == SpecOrigin::kRule) {
      int dim = -1;
      // On the corrected spec: a dim the correction left whole is not split at all (its uneven
      // finding says so), so its heads are not either.
      if (auto finding = CheckLogicalDim(*request.logical_dims, match_name, tensor.name, rule_shape, effective_rule,
                                         mesh, *request.config, &dim)) {
        finding->rule = param.rule;
        finding->loc = rule_set.rules[static_cast<size_t>(param.rule)].loc;
        add_finding(std::move(*finding), dim);
      }
    }
    param.issues = corrected.issues;
    // Per-expert tensors: the stacked expert dim's entry decides which devices hold this expert.
    // Tensors of one (rule, rule shape, shape, dtype, dim map, expert) land in the same group: look the
    // group up by those few integers before building the full key.
    fast_key.assign(cached->first);
    const auto append = [&fast_key](int64_t value) {
      fast_key.append(reinterpret_cast<const char*>(&value), sizeof(value));
    };
    append(-1);  // separates the correction key from the rest
    for (int64_t dim : tensor.shape.dims()) append(dim);
    append(DTypeBits(tensor.dtype));
    if (link) {
      append(link->has_counterpart);
      for (int dim : link->dim_of) append(dim);
      append(link->expert_dim);
      append(link->expert);
    }
    if (auto fast = group_by_fast_key.find(fast_key); fast != group_by_fast_key.end()) {
      param.group = fast->second;
    } else {
      GroupKey key{std::vector<int64_t>(tensor.shape.dims().begin(), tensor.shape.dims().end()),
                   param.effective.entries(),
                   DTypeBits(tensor.dtype),
                   {},
                   0,
                   -1,
                   false};
      if (link && link->has_counterpart && link->expert_dim >= 0) {
        key.has_expert = true;
        key.expert = link->expert;
        key.expert_size = link->rule_shape[link->expert_dim];
        if (link->expert_dim < effective_rule.size()) key.expert_entry = effective_rule[link->expert_dim];
      }
      auto [it, inserted] = group_index.try_emplace(key, static_cast<int>(plan.groups.size()));
      if (inserted) {
        auto layout = TensorLayout::Make(tensor.shape, param.effective, mesh, request.uneven);
        if (!layout.ok()) {
          // CorrectSpec removed whatever the layout rejects; a failure here is ours, not the user's.
          return Status::Internal(tensor.name + ": " + layout.status().diag().message);
        }
        LayoutGroup group{.layout = std::move(*layout), .bits = key.bits};
        if (key.has_expert) {
          auto expert_layout =
              TensorLayout::Make(Shape{key.expert_size}, PartitionSpec({key.expert_entry}), mesh, request.uneven);
          if (!expert_layout.ok()) return Status::Internal(tensor.name + ": " + expert_layout.status().diag().message);
          group.expert_layout = std::move(*expert_layout);
          group.expert = key.expert;
          std::set<std::string> placed(key.expert_entry.begin(), key.expert_entry.end());
          for (const PartitionSpec::Entry& entry : param.effective.entries()) placed.insert(entry.begin(), entry.end());
          for (int a = 0; a < mesh.rank(); ++a) {
            if (placed.count(mesh.axis_names[static_cast<size_t>(a)]) == 0) {
              group.replica_axes.emplace_back(a, mesh.shape[static_cast<size_t>(a)]);
            }
          }
        }
        plan.groups.push_back(std::move(group));
      }
      param.group = it->second;
      group_by_fast_key.emplace(fast_key, param.group);
    }

    // A large tensor held whole by every device while some mesh axis could split one of its dims.
    LayoutGroup& group = plan.groups[static_cast<size_t>(param.group)];
    if (param.effective.IsReplicated() && group.Replicas() == devices && devices > 1) {
      const int64_t bytes = group.MaxShardBytes();
      if (bytes >= request.large_replicated_bytes) {
        std::string could;
        for (int a = 0; a < mesh.rank() && could.empty(); ++a) {
          if (mesh.shape[static_cast<size_t>(a)] <= 1) continue;
          for (int d = 0; d < tensor.shape.rank(); ++d) {
            if (tensor.shape[d] % mesh.shape[static_cast<size_t>(a)] == 0) {
              could = fmt::format("'{}' (size {}) divides dim {} ({})", mesh.axis_names[static_cast<size_t>(a)],
                                  mesh.shape[static_cast<size_t>(a)], d, tensor.shape[d]);
              break;
            }
          }
        }
        if (!could.empty()) {
          Finding finding{.code = FindingCode::kLargeReplicated,
                          .message = fmt::format("{} {} ({}) is fully replicated on all {} devices", tensor.name,
                                                 tensor.shape.ToString(), HumanBytes(bytes), devices),
                          .tensor = tensor.name,
                          .count = 1,
                          .rule = param.rule,
                          .notes = {"mesh axis " + could + ": a rule giving that dim the axis would split it"}};
          if (param.rule >= 0) finding.loc = rule_set.rules[static_cast<size_t>(param.rule)].loc;
          add_finding(std::move(finding));
        }
      }
    }
    return Status();
  };

  // Counts a planned tensor into the plan's totals.
  const auto count = [&plan](const TensorOutcome& outcome) {
    for (int r : outcome.matches) ++plan.rule_matches[static_cast<size_t>(r)];
    if (outcome.param.origin == SpecOrigin::kRule) ++plan.rule_hits[static_cast<size_t>(outcome.param.rule)];
    ++plan.groups[static_cast<size_t>(outcome.param.group)].tensors;
  };

  // Tensors are replayed by their OutcomeKey only when names can be reduced to number shapes.
  const bool replay = request.replay_outcomes && match_memo.number_blind() &&
                      (request.logical_dims == nullptr || request.logical_dims->number_blind());
  FlatStringMap<TensorOutcome> outcomes;
  std::string outcome_key;
  for (size_t t = 0; t < tree.tensors.size(); ++t) {
    const LayoutLink* link = request.links.empty() ? nullptr : &request.links[t];
    if (replay) {
      OutcomeKey(link ? std::string_view(link->rule_name) : std::string_view(tree.tensors[t].name), tree.tensors[t],
                 link, &outcome_key);
      if (const TensorOutcome* found = outcomes.Find(outcome_key)) {
        const TensorOutcome& outcome = *found;
        count(outcome);
        for (size_t position : outcome.findings) findings.Recount(position, 1);
        if (request.keep_params) plan.params.emplace_back(outcome.param).tensor = static_cast<int>(t);
        continue;
      }
    }
    TensorOutcome outcome;
    EP_RETURN_IF_ERROR(plan_tensor(t, outcome));
    count(outcome);
    if (request.keep_params) plan.params.push_back(outcome.param);
    if (replay && outcome.replayable) outcomes.Insert(outcome_key, std::move(outcome));
  }

  // Per-device totals: uniform groups add one constant; the others are walked device by device.
  int64_t uniform = 0;
  for (const LayoutGroup& group : plan.groups) {
    if (!NeedsPerDevice(group))
      EP_RETURN_IF_ERROR(CheckedMulAdd(uniform, group.tensors, group.MaxShardBytes(), "plan"));
  }
  plan.device_bytes.assign(static_cast<size_t>(devices), uniform);
  for (const LayoutGroup& group : plan.groups) {
    if (!NeedsPerDevice(group)) continue;
    for (int64_t d = 0; d < devices; ++d) {
      EP_RETURN_IF_ERROR(
          CheckedMulAdd(plan.device_bytes[static_cast<size_t>(d)], group.tensors, group.BytesOn(d), "plan"));
    }
  }

  // Rules that take nothing: dead when they match nothing at all, shadowed when earlier rules took
  // every tensor they match.
  for (size_t r = 0; r < rule_set.rules.size(); ++r) {
    if (plan.rule_hits[r] > 0) continue;
    const rules::Rule& rule = rule_set.rules[r];
    // A final catch-all exists to be shadowed; flagging it would only be noise.
    if (rule.pattern == ".*" && r + 1 == rule_set.rules.size() && plan.rule_matches[r] > 0) continue;
    if (plan.rule_matches[r] == 0) {
      findings.Add(Finding{.code = FindingCode::kDeadRule,
                           .message = fmt::format("rule {} '{}' matches no tensor of this tree", r, rule.pattern),
                           .rule = static_cast<int>(r),
                           .loc = rule.loc});
    } else {
      findings.Add(
          Finding{.code = FindingCode::kShadowedRule,
                  .message = fmt::format("rule {} '{}' matches {} tensor{}, but earlier rules take {}", r, rule.pattern,
                                         plan.rule_matches[r], plan.rule_matches[r] == 1 ? "" : "s",
                                         plan.rule_matches[r] == 1 ? "it" : "all of them"),
                  .rule = static_cast<int>(r),
                  .loc = rule.loc});
    }
  }
  plan.findings = findings.Take();
  return plan;
}

}  // namespace easyplan::planner
