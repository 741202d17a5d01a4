#include "schemas/forward_structure.h"

#include <utility>

#include "core/did_you_mean.h"
#include "core/json_pointer.h"
#include "schemas/schema_reader.h"

namespace easyplan::schemas {
namespace {

template <typename Enum>
using Spellings = std::vector<std::pair<const char*, Enum>>;

const Spellings<NormKind> kNormKinds = {{"rms", NormKind::kRms}, {"layer", NormKind::kLayer}};
const Spellings<BlockKind> kBlockKinds = {{"sequential", BlockKind::kSequential}, {"parallel", BlockKind::kParallel}};
const Spellings<AttentionKind> kAttentionKinds = {{"grouped_query", AttentionKind::kGroupedQuery},
                                                  {"latent", AttentionKind::kLatent}};
const Spellings<FusedQkvLayout> kQkvLayouts = {{"none", FusedQkvLayout::kNone},
                                               {"blocks", FusedQkvLayout::kBlocks},
                                               {"kv_groups", FusedQkvLayout::kKvGroups},
                                               {"thirds", FusedQkvLayout::kThirds}};
const Spellings<RopeKind> kRopeKinds = {
    {"halves", RopeKind::kHalves}, {"interleaved", RopeKind::kInterleaved}, {"none", RopeKind::kNone}};
const Spellings<QkNormKind> kQkNormKinds = {{"per_head", QkNormKind::kPerHead}, {"full_width", QkNormKind::kFullWidth}};
const Spellings<ActivationKind> kActivations = {
    {"silu", ActivationKind::kSilu}, {"gelu", ActivationKind::kGelu}, {"gelu_tanh", ActivationKind::kGeluTanh}};
const Spellings<MlpKind> kMlpKinds = {{"gated", MlpKind::kGated}, {"plain", MlpKind::kPlain}};
const Spellings<RouterKind> kRouterKinds = {{"softmax_top_k", RouterKind::kSoftmaxTopK},
                                            {"sigmoid_group_limited", RouterKind::kSigmoidGroupLimited},
                                            {"top_k_softmax", RouterKind::kTopKSoftmax},
                                            {"top_k_sigmoid_input", RouterKind::kTopKSigmoidInput},
                                            {"softmax_group_limited", RouterKind::kSoftmaxGroupLimited},
                                            {"sparsemixer", RouterKind::kSparseMixer}};
const Spellings<ExpertsKind> kExpertsKinds = {{"gated_silu", ExpertsKind::kGatedSilu},
                                              {"fused_halves_silu", ExpertsKind::kFusedHalvesSilu},
                                              {"interleaved_clamped_glu", ExpertsKind::kInterleavedClampedGlu},
                                              {"split_clamped_glu", ExpertsKind::kSplitClampedGlu}};
const Spellings<ExpertsLayout> kExpertsLayouts = {{"stacked", ExpertsLayout::kStacked},
                                                  {"experts_last", ExpertsLayout::kExpertsLast},
                                                  {"packed_rows", ExpertsLayout::kPackedRows},
                                                  {"per_expert", ExpertsLayout::kPerExpert}};
const Spellings<ExpertsExecution> kExpertsExecutions = {{"fused_moe", ExpertsExecution::kFusedMoe},
                                                        {"expert_loop", ExpertsExecution::kExpertLoop},
                                                        {"per_token_gather", ExpertsExecution::kPerTokenGather},
                                                        {"score_masked_loop", ExpertsExecution::kScoreMaskedLoop}};
const Spellings<SparseLayers> kSparseLayers = {
    {"all", SparseLayers::kAll}, {"after_dense", SparseLayers::kAfterDense}, {"by_tree", SparseLayers::kByTree}};
const Spellings<SharedExpertKind> kSharedKinds = {{"none", SharedExpertKind::kNone},
                                                  {"plain", SharedExpertKind::kPlain},
                                                  {"sigmoid_gated", SharedExpertKind::kSigmoidGated}};
const Spellings<bool> kKernelLayouts = {{"in_out", false}, {"out_in", true}};

// Reads the members of one mapping of the block; each setter is a no-op for a key left out.
class Members {
 public:
  Members(const SchemaReader& reader, const Json& object, std::string pointer)
      : reader_(reader), object_(object), pointer_(std::move(pointer)) {}

  Status Keys(const std::vector<std::string>& allowed) const { return reader_.CheckKeys(object_, pointer_, allowed); }

  Status Text(const char* key, std::string* out) const {
    const Json* value = Find(key);
    if (value == nullptr) return Status();
    if (value->is_null()) {
      out->clear();
      return Status();
    }
    if (!value->is_string()) return Expected(key, "a parameter name (a string) or null", *value);
    *out = value->get<std::string>();
    return Status();
  }

  Status Flag(const char* key, bool* out) const {
    const Json* value = Find(key);
    if (value == nullptr) return Status();
    if (!value->is_boolean()) return Expected(key, "true or false", *value);
    *out = value->get<bool>();
    return Status();
  }

  Status OptionalFlag(const char* key, std::optional<bool>* out) const {
    const Json* value = Find(key);
    if (value == nullptr) return Status();
    if (value->is_null()) {
      out->reset();
      return Status();
    }
    bool flag = false;
    EP_RETURN_IF_ERROR(Flag(key, &flag));
    *out = flag;
    return Status();
  }

  // A list of candidate names, or one name, or null (none).
  Status Candidates(const char* key, std::vector<std::string>* out) const {
    const Json* value = Find(key);
    if (value == nullptr) return Status();
    out->clear();
    if (value->is_null()) return Status();
    if (value->is_string()) {
      out->push_back(value->get<std::string>());
      return Status();
    }
    if (!value->is_array()) return Expected(key, "a parameter name, a list of candidate names or null", *value);
    for (const Json& name : *value) {
      if (!name.is_string()) return Expected(key, "a list of parameter names", *value);
      out->push_back(name.get<std::string>());
    }
    return Status();
  }

  template <typename Enum>
  Status Kind(const char* key, const Spellings<Enum>& spellings, Enum* out) const {
    const Json* value = Find(key);
    if (value == nullptr) return Status();
    std::vector<std::string> names;
    for (const auto& [name, kind] : spellings) {
      names.emplace_back(name);
      if (value->is_string() && value->get<std::string>() == name) {
        *out = kind;
        return Status();
      }
    }
    std::string message = "'" + std::string(key) + "' is " + JsonForMessage(*value, 40) + ", not a known kind";
    if (value->is_string()) {
      if (auto suggestion = SuggestClosest(value->get<std::string>(), names)) {
        message += " (did you mean '" + *suggestion + "'?)";
      }
    }
    return Status::BadInput(reader_.Error(PointerToMember(pointer_, key), message).diag().loc, message,
                            {"expected one of " + JoinQuoted(names)});
  }

  // The nested mapping `key`, or nullptr when left out.
  StatusOr<const Json*> Nested(const char* key) const {
    const Json* value = Find(key);
    if (value != nullptr && !value->is_object()) return Expected(key, "a mapping", *value);
    return value;
  }

  std::string Pointer(const char* key) const { return PointerToMember(pointer_, key); }

 private:
  const Json* Find(const char* key) const {
    auto it = object_.find(key);
    return it == object_.end() ? nullptr : &*it;
  }

  Status Expected(const char* key, const std::string& what, const Json& found) const {
    return reader_.Error(PointerToMember(pointer_, key),
                         "expected " + what + " for '" + key + "', found " + JsonTypeName(found));
  }

  const SchemaReader& reader_;
  const Json& object_;
  std::string pointer_;
};

Status ApplyAttention(const Members& m, ForwardStructure::Attention* a) {
  EP_RETURN_IF_ERROR(m.Keys({"kind", "q", "k", "v", "o", "qkv", "layout", "q_norm", "k_norm", "qk_norm", "rope",
                             "l2_qk_norm", "sinks", "output_gate", "linear"}));
  EP_RETURN_IF_ERROR(m.Kind("kind", kAttentionKinds, &a->kind));
  for (auto [key, out] : {std::pair{"q", &a->q},
                          {"k", &a->k},
                          {"v", &a->v},
                          {"o", &a->o},
                          {"qkv", &a->qkv},
                          {"q_norm", &a->q_norm},
                          {"k_norm", &a->k_norm},
                          {"sinks", &a->sinks},
                          {"linear", &a->linear}}) {
    EP_RETURN_IF_ERROR(m.Text(key, out));
  }
  EP_RETURN_IF_ERROR(m.Kind("layout", kQkvLayouts, &a->layout));
  EP_RETURN_IF_ERROR(m.Kind("qk_norm", kQkNormKinds, &a->qk_norm));
  EP_RETURN_IF_ERROR(m.Kind("rope", kRopeKinds, &a->rope));
  EP_RETURN_IF_ERROR(m.Flag("l2_qk_norm", &a->l2_qk_norm));
  return m.Flag("output_gate", &a->output_gate);
}

Status ApplyMlp(const Members& m, ForwardStructure::Mlp* mlp) {
  EP_RETURN_IF_ERROR(m.Keys({"kind", "gate", "up", "down", "gate_up", "activation"}));
  EP_RETURN_IF_ERROR(m.Kind("kind", kMlpKinds, &mlp->kind));
  for (auto [key, out] :
       {std::pair{"gate", &mlp->gate}, {"up", &mlp->up}, {"down", &mlp->down}, {"gate_up", &mlp->gate_up}}) {
    EP_RETURN_IF_ERROR(m.Text(key, out));
  }
  return m.Kind("activation", kActivations, &mlp->activation);
}

Status ApplyMoe(const Members& m, ForwardStructure::Moe* moe) {
  EP_RETURN_IF_ERROR(m.Keys({"block", "router", "scoring", "score_bias", "experts", "gate", "up", "down", "gate_up",
                             "layout", "execution", "flatten_tokens", "shared", "shared_kind", "shared_gate",
                             "sparse_layers", "norm_topk_prob"}));
  for (auto [key, out] : {std::pair{"block", &moe->block},
                          {"router", &moe->router},
                          {"score_bias", &moe->score_bias},
                          {"gate", &moe->gate},
                          {"up", &moe->up},
                          {"down", &moe->down},
                          {"gate_up", &moe->gate_up},
                          {"shared", &moe->shared},
                          {"shared_gate", &moe->shared_gate}}) {
    EP_RETURN_IF_ERROR(m.Text(key, out));
  }
  EP_RETURN_IF_ERROR(m.Kind("scoring", kRouterKinds, &moe->router_kind));
  EP_RETURN_IF_ERROR(m.Kind("experts", kExpertsKinds, &moe->experts));
  EP_RETURN_IF_ERROR(m.Kind("layout", kExpertsLayouts, &moe->layout));
  EP_RETURN_IF_ERROR(m.Kind("execution", kExpertsExecutions, &moe->execution));
  EP_RETURN_IF_ERROR(m.Flag("flatten_tokens", &moe->flatten_tokens));
  EP_RETURN_IF_ERROR(m.Kind("shared_kind", kSharedKinds, &moe->shared_kind));
  EP_RETURN_IF_ERROR(m.Kind("sparse_layers", kSparseLayers, &moe->sparse_layers));
  return m.OptionalFlag("norm_topk_prob", &moe->norm_topk_prob);
}

}  // namespace

Status ApplyForwardStructure(const Document& doc, const Json& block, const std::string& pointer, ForwardStructure* s) {
  const SchemaReader reader(doc);
  const Members m(reader, block, pointer);
  EP_RETURN_IF_ERROR(
      m.Keys({"extends", "doc", "embedding", "positions", "scale_embedding", "layers", "final_norm", "head",
              "tied_by_tree", "kernels", "norm", "zero_centered_norms", "block", "norms", "attention", "mlp", "moe"}));
  for (auto [key, out] : {std::pair{"embedding", &s->embedding},
                          {"positions", &s->positions},
                          {"layers", &s->layers},
                          {"final_norm", &s->final_norm},
                          {"head", &s->head}}) {
    EP_RETURN_IF_ERROR(m.Text(key, out));
  }
  EP_RETURN_IF_ERROR(m.Flag("scale_embedding", &s->scale_embedding));
  EP_RETURN_IF_ERROR(m.Flag("tied_by_tree", &s->tied_by_tree));
  EP_RETURN_IF_ERROR(m.Kind("kernels", kKernelLayouts, &s->kernels_out_in));
  EP_RETURN_IF_ERROR(m.Kind("norm", kNormKinds, &s->norm));
  EP_RETURN_IF_ERROR(m.Flag("zero_centered_norms", &s->zero_centered_norms));
  EP_RETURN_IF_ERROR(m.Kind("block", kBlockKinds, &s->block));
  EP_ASSIGN_OR_RETURN(const Json* norms, m.Nested("norms"));
  if (norms != nullptr) {
    const Members n(reader, *norms, m.Pointer("norms"));
    EP_RETURN_IF_ERROR(n.Keys({"attention", "attention_output", "mlp", "mlp_output"}));
    EP_RETURN_IF_ERROR(n.Candidates("attention", &s->attention_norm));
    EP_RETURN_IF_ERROR(n.Candidates("attention_output", &s->attention_output_norm));
    EP_RETURN_IF_ERROR(n.Candidates("mlp", &s->mlp_norm));
    EP_RETURN_IF_ERROR(n.Candidates("mlp_output", &s->mlp_output_norm));
  }
  EP_ASSIGN_OR_RETURN(const Json* attention, m.Nested("attention"));
  if (attention != nullptr)
    EP_RETURN_IF_ERROR(ApplyAttention(Members(reader, *attention, m.Pointer("attention")), &s->attention));
  EP_ASSIGN_OR_RETURN(const Json* mlp, m.Nested("mlp"));
  if (mlp != nullptr) EP_RETURN_IF_ERROR(ApplyMlp(Members(reader, *mlp, m.Pointer("mlp")), &s->mlp));
  EP_ASSIGN_OR_RETURN(const Json* moe, m.Nested("moe"));
  if (moe != nullptr) EP_RETURN_IF_ERROR(ApplyMoe(Members(reader, *moe, m.Pointer("moe")), &s->moe));
  return Status();
}

std::vector<std::string> ForwardStructureNames(const Document& doc) {
  std::vector<std::string> names;
  const Json& root = doc.root();
  if (auto forwards = root.find("forwards"); forwards != root.end() && forwards->is_object()) {
    for (const auto& [name, value] : forwards->items()) names.push_back(name);
  }
  return names;
}

StatusOr<ForwardStructure> NamedForwardStructure(const Document& doc, const std::string& name, const SourceLoc& loc) {
  const SchemaReader reader(doc);
  const Json& root = doc.root();
  EP_RETURN_IF_ERROR(reader.CheckKeys(root, "", {"forwards"}));
  // The chain from `name` to its root, each step an `extends`; at most as long as the file, so a loop ends.
  std::vector<std::pair<std::string, std::string>> chain;  // (name, pointer)
  std::string next = name;
  const std::vector<std::string> names = ForwardStructureNames(doc);
  while (!next.empty()) {
    const std::string pointer = "/forwards/" + EscapePointerToken(next);
    const Json* entry = root.contains("forwards") ? &root["forwards"] : nullptr;
    if (entry == nullptr || !entry->contains(next)) {
      std::string message = "forward '" + next + "' is not a structure of schemas/forwards.yaml";
      if (auto suggestion = SuggestClosest(next, names)) message += " (did you mean '" + *suggestion + "'?)";
      const SourceLoc where = chain.empty() ? loc : doc.Locate(chain.back().second + "/extends");
      return Status::BadInput(where, message, {"expected one of " + JoinQuoted(names)});
    }
    if (chain.size() > names.size()) return reader.Error(pointer, "forward '" + name + "' extends itself in a loop");
    chain.emplace_back(next, pointer);
    EP_ASSIGN_OR_RETURN(next, reader.String((*entry)[next], pointer, "extends", false));
  }
  ForwardStructure structure;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    EP_RETURN_IF_ERROR(ApplyForwardStructure(doc, root["forwards"][it->first], it->second, &structure));
  }
  structure.name = name;
  return structure;
}

}  // namespace easyplan::schemas
