// Config resolution: file keys, overrides, family defaults, EasyDeL attributes (set_attrs_smartly),
// derived fields, checks and sub-configs, in the order docs/SCHEMAS.md gives.
#include "schemas/resolver.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/axis_dims.h"
#include "core/did_you_mean.h"
#include "core/dtype.h"
#include "core/json_pointer.h"
#include "schemas/overrides.h"

namespace easyplan::schemas {
namespace {

constexpr char kFile[] = "file";
constexpr char kOverrides[] = "overrides";
constexpr char kSet[] = "set";
constexpr char kEasyDelDefault[] = "default:easydel";
constexpr char kDerived[] = "derived";
constexpr int kMaxSubConfigDepth = 4;

// Keys every HF config may carry that no class declares as a field; never reported as typos.
const std::set<std::string>& WellKnownExtraKeys() {
  static const std::set<std::string> kKeys = {"model_type",    "transformers_version", "_name_or_path",
                                              "auto_map",      "torch_dtype",          "dtype",
                                              "architectures", "quantization_config"};
  return kKeys;
}

// Renders a value for a message: strings bare, everything else as compact JSON.
std::string Show(const Json& value) { return value.is_string() ? value.get<std::string>() : JsonForMessage(value); }

// The family chain: the family itself, then what it inherits, outermost last.
struct FamilyChain {
  std::vector<const FamilySchema*> schemas;

  const FieldSpec* FindField(const std::string& name) const {
    for (const FamilySchema* schema : schemas) {
      for (const FieldSpec& field : schema->fields) {
        if (field.name == name) return &field;
      }
    }
    return nullptr;
  }
  const FamilySchema* primary() const { return schemas.empty() ? nullptr : schemas.front(); }
};

class Resolver {
 public:
  Resolver(const ConfigInput& input, const ResolveOptions& options, SchemaSet& schemas)
      : input_(input), options_(options), schemas_(schemas) {}

  StatusOr<ResolvedConfig> Run() {
    const Json& root = input_.config.root();
    if (!root.is_object()) {
      return Status::BadInput(input_.config.Locate(""),
                              std::string("expected a JSON object at the top level, found ") + JsonTypeName(root));
    }
    EP_ASSIGN_OR_RETURN(easydel_, schemas_.EasyDel(options_.easydel_version));
    Json config = root;
    for (const auto& key : config.items()) origin_[key.key()] = kFile;
    for (const std::string& pointer : input_.config.duplicate_keys()) {
      Warn(input_.config.Locate(pointer), input_.config.DuplicateKeyMessage(pointer));
    }
    if (input_.overrides) {
      for (const std::string& pointer : input_.overrides->duplicate_keys()) {
        Warn(input_.overrides->Locate(pointer), input_.overrides->DuplicateKeyMessage(pointer));
      }
    }
    EP_RETURN_IF_ERROR(ApplyOverrides(config));
    EP_RETURN_IF_ERROR(RefuseNonFinite(config, ""));
    for (const auto& item : config.items()) input_order_.push_back(item.key());

    // The family: model_type selects the schema; unknown or missing still resolves base defaults.
    std::string model_type;
    if (auto it = config.find("model_type"); it != config.end()) {
      if (!it->is_string()) {
        return Status::BadInput(Where("/model_type"),
                                std::string("expected a string, found ") + JsonTypeName(*it) + " " + Show(*it));
      }
      model_type = it->get<std::string>();
    }
    EP_ASSIGN_OR_RETURN(const FamilySchema* family, schemas_.Family(model_type.empty() ? "_" : model_type));
    if (family == nullptr) WarnUnknownFamily(model_type);
    family_name_ = family ? family->model_type : "";
    if (family != nullptr && family->model_type != model_type) {
      diags_.push_back(Diag{Severity::kNote,
                            Where("/model_type"),
                            "model_type '" + model_type + "' is an alias of '" + family->model_type +
                                "': its defaults, parameter tree and partition rules are '" + family->model_type + "'s",
                            {}});
    }
    EP_ASSIGN_OR_RETURN(FamilyChain chain, LoadChain(family));

    EP_RETURN_IF_ERROR(ResolveObject(config, "", chain, /*top_level=*/true));
    EP_RETURN_IF_ERROR(ResolveMesh(config));

    ResolvedConfig result;
    result.family = family_name_;
    result.geometry = std::move(geometry_);
    result.dim_keys = std::move(dim_keys_);
    result.config = Order(config, chain);
    result.provenance = Json::object();
    for (const auto& item : result.config.items()) AppendMember(result.provenance, item.key(), origin_[item.key()]);
    result.diags = std::move(diags_);
    return result;
  }

 private:
  // ---- Locations and diagnostics ---------------------------------------------------------------

  // Where the value at `pointer` came from: a line in the config or overrides file, a --set flag, or
  // the schema that supplied a default.
  SourceLoc Where(const std::string& pointer) const {
    if (pointer.empty()) return input_.config.Locate("");
    const std::string key = FirstPointerKey(pointer);
    auto it = origin_.find(key);
    std::string origin = it == origin_.end() ? "" : it->second;
    SourceLoc loc;
    if (origin == kFile) {
      loc = input_.config.Locate(pointer);
    } else if (origin == kOverrides && input_.overrides) {
      loc = input_.overrides->Locate(pointer);
    } else if (origin == kSet) {
      loc.file = SetForMessage(set_text_.at(key));
    } else {
      loc.file = input_.config.file();
    }
    loc.pointer = pointer;
    return loc;
  }

  void Warn(SourceLoc loc, std::string message, std::vector<std::string> notes = {}) {
    diags_.push_back(Diag{Severity::kWarning, std::move(loc), std::move(message), std::move(notes)});
  }

  Status Bad(const std::string& pointer, std::string message, std::vector<std::string> notes = {}) const {
    return Status::BadInput(Where(pointer), std::move(message), std::move(notes));
  }

  // Adds "in <schema>:<line>: <expr>" to an expression failure so the schema author can find it.
  Status ExprFailure(const std::string& pointer, const Status& status, const SourceLoc& schema_loc) const {
    return Bad(pointer, status.diag().message, {"from " + schema_loc.ToString()});
  }

  void WarnUnknownFamily(const std::string& model_type) {
    std::vector<std::string> names = schemas_.FamilyNames();
    std::string known;
    for (const std::string& name : names) known += (known.empty() ? "" : ", ") + name;
    if (model_type.empty()) {
      Warn(SourceLoc{input_.config.file()},
           "no model_type; only the EasyDeL and transformers base defaults are applied",
           {"known model types: " + known});
      return;
    }
    std::string message = "unknown model_type '" + model_type + "'";
    if (auto suggestion = SuggestClosest(model_type, names)) message += " (did you mean '" + *suggestion + "'?)";
    message += "; only the EasyDeL and transformers base defaults are applied";
    Warn(Where("/model_type"), message, {"known model types: " + known});
  }

  // ---- Inputs ------------------------------------------------------------------------------------

  // A YAML overrides file can write `.inf` or `.nan`; JSON cannot, and every output that echoes the
  // config is JSON or YAML read back as JSON, whose emitters treat a non-finite number as a bug
  // (core/emit.h). So such a value is refused where it is written.
  Status RefuseNonFinite(const Json& value, const std::string& pointer) const {
    if (value.is_number_float() && !std::isfinite(value.get<double>())) {
      const double number = value.get<double>();
      return Bad(pointer, std::string("expected a finite number, found ") +
                              (std::isnan(number) ? ".nan" : (number > 0 ? ".inf" : "-.inf")));
    }
    if (value.is_object()) {
      for (const auto& [key, member] : value.items()) {
        EP_RETURN_IF_ERROR(RefuseNonFinite(member, PointerToMember(pointer, key)));
      }
    } else if (value.is_array()) {
      for (size_t i = 0; i < value.size(); ++i)
        EP_RETURN_IF_ERROR(RefuseNonFinite(value[i], PointerToElement(pointer, i)));
    }
    return Status();
  }

  Status ApplyOverrides(Json& config) {
    if (input_.overrides) {
      const Json& overrides = input_.overrides->root();
      if (!overrides.is_object()) {
        return Status::BadInput(input_.overrides->Locate(""),
                                std::string("expected an object of overrides, found ") + JsonTypeName(overrides));
      }
      for (const std::string& key : MergeOverrides(config, overrides)) origin_[key] = kOverrides;
    }
    for (const std::string& assignment : input_.sets) {
      EP_ASSIGN_OR_RETURN(std::string key, ApplySet(config, assignment, options_.limits));
      origin_[key] = kSet;
      set_text_[key] = assignment;
    }
    return Status();
  }

  StatusOr<FamilyChain> LoadChain(const FamilySchema* family) {
    FamilyChain chain;
    if (family == nullptr) {
      EP_ASSIGN_OR_RETURN(family, schemas_.Family("_hf_base"));
      if (family == nullptr) return chain;
    }
    std::set<std::string> seen;
    while (family != nullptr) {
      if (!seen.insert(family->model_type).second) {
        return Status::BadInput({family->source}, "inheritance cycle through '" + family->model_type + "'");
      }
      chain.schemas.push_back(family);
      if (family->inherits.empty()) break;
      EP_ASSIGN_OR_RETURN(const FamilySchema* parent, schemas_.Family(family->inherits));
      if (parent == nullptr) {
        return Status::BadInput({family->source}, "inherits unknown schema '" + family->inherits + "'");
      }
      family = parent;
    }
    return chain;
  }

  // ---- One config object (the top level, or a sub-config such as gemma3's text_config) -----------

  Status ResolveObject(Json& config, const std::string& prefix, const FamilyChain& chain, bool top_level) {
    const FamilySchema* family = chain.primary();
    std::string default_origin =
        "default:" + (family && family->model_type != "_hf_base" ? family->model_type : std::string("transformers"));
    // 1. Aliases: a value given under an alias moves to its stored name.
    std::set<std::string> given_aliases;
    if (family != nullptr) {
      for (const auto& [alias, stored] : family->attribute_map) {
        auto it = config.find(alias);
        if (it == config.end()) continue;
        given_aliases.insert(alias);
        if (config.contains(stored) && config[stored] != *it) {
          return Bad(PointerToMember(prefix, alias), "conflicting values: '" + alias + "' is " + Show(*it) + " but '" +
                                                         stored + "' (which '" + alias + "' aliases) is " +
                                                         Show(config[stored]));
        }
        Json value = *it;
        config.erase(alias);
        if (!config.contains(stored)) {
          config[stored] = std::move(value);
          if (top_level) {
            origin_[stored] = origin_[alias];
            if (origin_[alias] == kSet) set_text_[stored] = set_text_[alias];
            std::replace(input_order_.begin(), input_order_.end(), alias, stored);
          }
        }
      }
    }
    // The layer count, before any default or derived field is computed from it (docs/RELIABILITY.md).
    EP_RETURN_IF_ERROR(CheckLayerCount(config, prefix, family));
    // 2. Family defaults for missing fields (EasyDeL attributes are left to step 3: its default wins).
    for (const FamilySchema* schema : chain.schemas) {
      for (const FieldSpec& field : schema->fields) {
        if (config.contains(field.name) || IsEasyDelAttribute(field.name)) continue;
        EP_ASSIGN_OR_RETURN(Json value, DefaultOf(field, config, prefix, false));
        config[field.name] = std::move(value);
        if (top_level) origin_[field.name] = default_origin;
      }
    }
    // 3. EasyDeL attributes, set_attrs_smartly style: a present key (even null) wins.
    EP_RETURN_IF_ERROR(ApplyEasyDel(config, prefix, top_level));
    // 4. Types and enumerations of every declared key, then likely typos among the unknown ones.
    EP_RETURN_IF_ERROR(CheckTypes(config, prefix, chain));
    WarnTypos(config, prefix, chain);
    // 5. Input checks, derived fields, resolved checks.
    EP_RETURN_IF_ERROR(RunChecks(config, prefix, chain, CheckSpec::Phase::kInput));
    EP_RETURN_IF_ERROR(Derive(config, prefix, chain, top_level));
    EP_RETURN_IF_ERROR(RunChecks(config, prefix, chain, CheckSpec::Phase::kResolved));
    EP_RETURN_IF_ERROR(Geometry(config, prefix, chain));
    // 6. Sub-configs, which also receive this config's EasyDeL attributes (read_basics_from_config).
    if (family != nullptr) {
      for (const auto& [key, sub_family_name] : family->sub_configs) {
        EP_RETURN_IF_ERROR(ResolveSubConfig(config, prefix, key, sub_family_name));
      }
    }
    // 7. Canonical names: every alias is present next to its stored name. An alias the input did not
    //    give says where its value is from: "file (num_local_experts)".
    if (family != nullptr) {
      for (const auto& [alias, stored] : family->attribute_map) {
        if (config.contains(stored)) {
          config[alias] = config[stored];
          if (top_level)
            origin_[alias] = given_aliases.count(alias) ? origin_[stored] : origin_[stored] + " (" + stored + ")";
        }
      }
    }
    return Status();
  }

  // num_hidden_layers (under the family's own name for it, gpt2's n_layer) at most limits.max_layers:
  // every later stage repeats per layer. A value of the wrong type is left to the type check.
  Status CheckLayerCount(const Json& config, const std::string& prefix, const FamilySchema* family) const {
    std::string key = "num_hidden_layers";
    if (family != nullptr) {
      for (const auto& [alias, stored] : family->attribute_map) {
        if (alias == key) key = stored;
      }
    }
    auto it = config.find(key);
    if (it == config.end() || !it->is_number_integer()) return Status();
    const int64_t layers = it->get<int64_t>();  // the parsers refuse integers past int64
    if (layers <= options_.limits.max_layers) return Status();
    return Bad(PointerToMember(prefix, key),
               key + " is " + std::to_string(layers) + ", more than the limit of " +
                   std::to_string(options_.limits.max_layers) + " layers",
               {LimitNote("--max-layers", static_cast<uint64_t>(options_.limits.max_layers))});
  }

  bool IsEasyDelAttribute(const std::string& name) const {
    for (const FieldSpec& field : easydel_->attributes) {
      if (field.name == name) return true;
    }
    return false;
  }

  // The default a field gets under the active profile (literal or expression over `scope`).
  StatusOr<Json> DefaultOf(const FieldSpec& field, const Json& scope, const std::string& prefix, bool easydel) const {
    bool init = easydel && options_.profile == DefaultsProfile::kInit;
    if (init && field.init_default_value) return *field.init_default_value;
    const std::optional<Expression>& expr =
        init && field.init_default_expr ? field.init_default_expr : field.default_expr;
    if (init && field.init_default_expr) {
      auto value = field.init_default_expr->Evaluate(scope);
      if (!value.ok()) return ExprFailure(PointerToMember(prefix, field.name), value.status(), field.loc);
      return *value;
    }
    if (field.default_value) return *field.default_value;
    if (expr) {
      auto value = expr->Evaluate(scope);
      if (!value.ok()) return ExprFailure(PointerToMember(prefix, field.name), value.status(), field.loc);
      return *value;
    }
    return Json(nullptr);
  }

  Status ApplyEasyDel(Json& config, const std::string& prefix, bool top_level) {
    for (const FieldSpec& field : easydel_->attributes) {
      if (field.forced) {
        auto it = config.find(field.name);
        if (it != config.end() && *it != *field.forced) {
          Warn(Where(PointerToMember(prefix, field.name)), field.name + " " + Show(*it) + " is replaced by " +
                                                               Show(*field.forced) +
                                                               ": EasyDeLBaseConfig always sets it");
        }
        if (it == config.end() || *it != *field.forced) {
          config[field.name] = *field.forced;
          if (top_level) origin_[field.name] = kEasyDelDefault;
        }
        continue;
      }
      if (field.name == "partition_axis") {
        if (!config.contains(field.name)) {
          config[field.name] = Json::object();
          if (top_level) origin_[field.name] = kEasyDelDefault;
        }
        EP_RETURN_IF_ERROR(ResolvePartitionAxis(config[field.name], prefix + "/partition_axis"));
        continue;
      }
      if (config.contains(field.name)) continue;
      EP_ASSIGN_OR_RETURN(Json value, DefaultOf(field, config, prefix, true));
      config[field.name] = std::move(value);
      if (top_level) origin_[field.name] = kEasyDelDefault;
    }
    return Status();
  }

  // PartitionAxis(**dict): unknown fields are errors; missing ones are derived from the given names.
  Status ResolvePartitionAxis(Json& axis, const std::string& pointer) {
    if (axis.is_null()) axis = Json::object();  // None -> PartitionAxis()
    if (!axis.is_object()) {
      return Bad(pointer, std::string("expected an object of PartitionAxis fields, found ") + JsonTypeName(axis));
    }
    std::vector<std::string> names;
    for (const FieldSpec& field : easydel_->partition_axis) names.push_back(field.name);
    for (const auto& item : axis.items()) {
      if (std::find(names.begin(), names.end(), item.key()) != names.end()) continue;
      std::string message = "unknown PartitionAxis field '" + item.key() + "'";
      if (auto suggestion = SuggestClosest(item.key(), names)) message += " (did you mean '" + *suggestion + "'?)";
      return Bad(PointerToMember(pointer, item.key()), message);
    }
    Json resolved = Json::object();
    for (const FieldSpec& field : easydel_->partition_axis) {
      Json value;
      if (axis.contains(field.name)) {
        value = axis[field.name];
      } else {
        EP_ASSIGN_OR_RETURN(value, DefaultOf(field, resolved, pointer, false));
      }
      if (auto expected = field.type.Check(value)) {
        return Bad(PointerToMember(pointer, field.name),
                   "expected " + *expected + ", found " + JsonTypeName(value) + " " + Show(value));
      }
      resolved[field.name] = std::move(value);
    }
    axis = std::move(resolved);
    return Status();
  }

  Status CheckField(Json& config, const std::string& prefix, const FieldSpec& field) const {
    auto it = config.find(field.name);
    if (it == config.end()) return Status();
    std::string pointer = PointerToMember(prefix, field.name);
    Json original = *it;
    if (auto expected = field.type.Check(*it)) {
      std::string found = std::string(JsonTypeName(original)) + " " + JsonForMessage(original);
      if (original.is_number_unsigned() ||
          (original.is_number_integer() && original.get<int64_t>() <= 0 && field.type.text().starts_with("size"))) {
        found = JsonForMessage(original);
      }
      std::vector<std::string> notes;
      if (field.type.text().starts_with("dtype") && original.is_string()) {
        std::vector<std::string> dtype_names;
        for (std::string_view name : AllDTypeNames()) dtype_names.emplace_back(name);
        if (auto suggestion = SuggestClosest(original.get<std::string>(), dtype_names)) {
          notes.push_back("did you mean '" + *suggestion + "'?");
        }
      }
      return Bad(pointer, "expected " + *expected + ", found " + found, notes);
    }
    if (field.allowed.empty() || it->is_null()) return Status();
    std::vector<Json> values = it->is_array() ? std::vector<Json>(it->begin(), it->end()) : std::vector<Json>{*it};
    for (size_t i = 0; i < values.size(); ++i) {
      if (std::find(field.allowed.begin(), field.allowed.end(), values[i]) != field.allowed.end()) continue;
      std::vector<std::string> allowed;
      for (const Json& value : field.allowed)
        allowed.push_back(value.is_string() ? value.get<std::string>() : value.dump());
      std::string message = field.name + " " + JsonForMessage(values[i]) + " is not one EasyDeL accepts";
      if (values[i].is_string()) {
        if (auto suggestion = SuggestClosest(values[i].get<std::string>(), allowed)) {
          message += " (did you mean \"" + *suggestion + "\"?)";
        }
      }
      return Bad(it->is_array() ? PointerToElement(pointer, i) : pointer, message,
                 {"expected one of " + JoinQuoted(allowed)});
    }
    return Status();
  }

  Status CheckTypes(Json& config, const std::string& prefix, const FamilyChain& chain) const {
    std::set<std::string> checked;
    for (const FamilySchema* schema : chain.schemas) {
      for (const FieldSpec& field : schema->fields) {
        if (!checked.insert(field.name).second || IsEasyDelAttribute(field.name)) continue;
        EP_RETURN_IF_ERROR(CheckField(config, prefix, field));
      }
    }
    for (const FieldSpec& field : easydel_->attributes) EP_RETURN_IF_ERROR(CheckField(config, prefix, field));
    // Keys inside object fields (rope_scaling.factor): checked in their object, when both are there.
    for (const FamilySchema* schema : chain.schemas) {
      for (const FieldSpec& field : schema->subfields) {
        const size_t dot = field.name.find('.');
        auto object = config.find(field.name.substr(0, dot));
        if (object == config.end() || !object->is_object()) continue;
        FieldSpec inner = field;
        inner.name = field.name.substr(dot + 1);
        EP_RETURN_IF_ERROR(CheckField(*object, PointerToMember(prefix, field.name.substr(0, dot)), inner));
      }
    }
    return Status();
  }

  // An unknown key one or two edits away from a known one is most likely a typo that silently does
  // nothing (HF keeps unknown keys as plain attributes): say so. --strict makes it an error.
  void WarnTypos(const Json& config, const std::string& prefix, const FamilyChain& chain) {
    std::vector<std::string> known;
    for (const FamilySchema* schema : chain.schemas) {
      for (const FieldSpec& field : schema->fields) known.push_back(field.name);
      for (const DerivedSpec& derived : schema->derived) known.push_back(derived.name);
      for (const auto& [alias, stored] : schema->attribute_map) known.push_back(alias);
      for (const auto& [key, family] : schema->sub_configs) known.push_back(key);
    }
    for (const FieldSpec& field : easydel_->attributes) known.push_back(field.name);
    for (const auto& item : config.items()) {
      const std::string& key = item.key();
      if (std::find(known.begin(), known.end(), key) != known.end() || WellKnownExtraKeys().count(key)) continue;
      const std::string* best = nullptr;
      size_t best_distance = 3;
      for (const std::string& candidate : known) {
        // Lengths differing by more than 2 mean more than 2 edits: skip the O(length^2) distance.
        if (key.size() > candidate.size() + 2 || candidate.size() > key.size() + 2) continue;
        size_t distance = EditDistance(key, candidate);
        size_t limit = std::min(key.size(), candidate.size()) >= 8 ? 2 : 1;
        if (distance <= limit && distance < best_distance && key.size() >= 4) {
          best = &candidate;
          best_distance = distance;
        }
      }
      if (best != nullptr) {
        Warn(Where(PointerToMember(prefix, key)),
             "unknown key '" + key + "' (did you mean '" + *best + "'?); it is kept as given and has no effect");
      }
    }
  }

  Status RunChecks(Json& config, const std::string& prefix, const FamilyChain& chain, CheckSpec::Phase phase) const {
    for (const FamilySchema* schema : chain.schemas) {
      for (const CheckSpec& check : schema->checks) {
        if (check.phase != phase) continue;
        std::string pointer = PointerToMember(prefix, check.key);
        if (check.when) {
          auto when = check.when->Evaluate(config);
          if (!when.ok()) return ExprFailure(pointer, when.status(), check.loc);
          if (!IsTruthy(*when)) continue;
        }
        auto holds = check.require.Evaluate(config);
        if (!holds.ok()) return ExprFailure(pointer, holds.status(), check.loc);
        if (IsTruthy(*holds)) continue;
        EP_ASSIGN_OR_RETURN(std::string message, Interpolate(check.message, config, pointer, check.loc));
        return Bad(pointer, message);
      }
    }
    return Status();
  }

  // Replaces each {expr} in a check message with the expression's value.
  StatusOr<std::string> Interpolate(const std::string& text, const Json& config, const std::string& pointer,
                                    const SourceLoc& loc) const {
    std::string out;
    size_t i = 0;
    while (i < text.size()) {
      size_t open = text.find('{', i);
      if (open == std::string::npos) break;
      size_t close = text.find('}', open);
      if (close == std::string::npos) break;
      out += text.substr(i, open - i);
      auto expr = Expression::Parse(text.substr(open + 1, close - open - 1));
      if (!expr.ok()) return ExprFailure(pointer, expr.status(), loc);
      auto value = expr->Evaluate(config);
      if (!value.ok()) return ExprFailure(pointer, value.status(), loc);
      out += Show(*value);
      i = close + 1;
    }
    return out + text.substr(std::min(i, text.size()));
  }

  Status Derive(Json& config, const std::string& prefix, const FamilyChain& chain, bool top_level) {
    for (auto schema = chain.schemas.rbegin(); schema != chain.schemas.rend(); ++schema) {
      for (const DerivedSpec& derived : (*schema)->derived) {
        std::string pointer = PointerToMember(prefix, derived.name);
        if (derived.when) {
          auto when = derived.when->Evaluate(config);
          if (!when.ok()) return ExprFailure(pointer, when.status(), derived.loc);
          if (!IsTruthy(*when)) continue;
        }
        auto value = derived.value.Evaluate(config);
        if (!value.ok()) return ExprFailure(pointer, value.status(), derived.loc);
        // "object.key" derives a key inside an object the config holds (rope_scaling.rope_type).
        if (const size_t dot = derived.name.find('.'); dot != std::string::npos) {
          const std::string parent = derived.name.substr(0, dot), key = derived.name.substr(dot + 1);
          auto object = config.find(parent);
          if (object == config.end() || !object->is_object()) continue;
          auto current = object->find(key);
          if (current != object->end() && *current == *value && current->type() == value->type()) continue;
          (*object)[key] = std::move(*value);
          if (top_level) origin_[parent] = kDerived;  // the file's object, completed
          continue;
        }
        auto it = config.find(derived.name);
        if (it != config.end() && *it == *value && (*it).type() == value->type()) continue;
        config[derived.name] = std::move(*value);
        if (top_level) origin_[derived.name] = kDerived;
      }
    }
    return Status();
  }

  // The family's geometry entries over the resolved object; a family's own entry wins over an inherited one.
  Status Geometry(const Json& config, const std::string& prefix, const FamilyChain& chain) {
    Json values = Json::object();
    for (const FamilySchema* schema : chain.schemas) {
      for (const DerivedSpec& entry : schema->geometry) {
        if (values.contains(entry.name)) continue;
        auto value = entry.value.Evaluate(config);
        if (!value.ok()) return ExprFailure(PointerToMember(prefix, entry.name), value.status(), entry.loc);
        values[entry.name] = std::move(*value);
      }
    }
    if (!values.empty()) geometry_[prefix] = std::move(values);
    EP_ASSIGN_OR_RETURN(const DimKeys* shared, schemas_.SharedDimKeys());
    std::vector<const DimKeyOverrides*> overrides;
    for (const FamilySchema* schema : chain.schemas) overrides.push_back(&schema->dim_keys);
    DimKeys keys = WithOverrides(*shared, overrides);
    for (const FamilySchema* schema : chain.schemas) {
      for (const DerivedSpec& entry : schema->geometry) EP_RETURN_IF_ERROR(CheckGeometryIsRead(entry, keys));
    }
    dim_keys_[prefix] = std::move(keys);
    return Status();
  }

  // A geometry entry is read under one of the dims' keys, or is one ModelDims reads by its own name:
  // an entry under a key no dim is read from (a family that renamed the dim's keys in `dims:`) would be
  // silently ignored.
  static Status CheckGeometryIsRead(const DerivedSpec& entry, const DimKeys& keys) {
    std::vector<std::string> read = {"gated_mlp", "context_key", "context_positions"};
    for (size_t i = 0; i < kDimCount; ++i) {
      for (const std::string& key : keys.Keys(static_cast<Dim>(i))) read.push_back(key);
    }
    if (std::find(read.begin(), read.end(), entry.name) != read.end()) return Status();
    SourceLoc loc = entry.loc;
    loc.pointer = PointerToMember("/geometry", entry.name);
    std::string message = "geometry '" + entry.name +
                          "' is no key a dim is read from (schemas/dims.yaml, or the family's `dims:`), so nothing "
                          "would read it";
    if (auto suggestion = SuggestClosest(entry.name, read)) message += " (did you mean '" + *suggestion + "'?)";
    return Status::BadInput(loc, message);
  }

  Status ResolveSubConfig(Json& config, const std::string& prefix, const std::string& key,
                          const std::string& family_name) {
    std::string pointer = PointerToMember(prefix, key);
    // Real configs nest one level (gemma3 -> text_config); a schema whose sub-configs refer back to
    // themselves would otherwise recurse forever.
    if (sub_config_depth_ >= kMaxSubConfigDepth) {
      return Bad(pointer, "sub-configs nest deeper than " + std::to_string(kMaxSubConfigDepth) +
                              " levels; the schemas' sub_configs form a cycle through '" + family_name + "'");
    }
    Json& sub = config[key];
    if (sub.is_null()) sub = Json::object();  // HF builds the default sub-config for None
    if (!sub.is_object()) {
      return Bad(pointer, std::string("expected an object (a nested config), found ") + JsonTypeName(sub));
    }
    std::string name = family_name;
    if (auto it = sub.find("model_type"); it != sub.end() && it->is_string()) name = it->get<std::string>();
    EP_ASSIGN_OR_RETURN(const FamilySchema* family, schemas_.Family(name));
    if (family == nullptr) {
      Warn(Where(pointer + "/model_type"),
           "unknown model_type '" + name + "' in " + key + "; only the base defaults are applied");
    }
    EP_ASSIGN_OR_RETURN(FamilyChain chain, LoadChain(family));
    ++sub_config_depth_;
    Status status = ResolveObject(sub, pointer, chain, /*top_level=*/false);
    --sub_config_depth_;
    EP_RETURN_IF_ERROR(status);
    for (const FieldSpec& field : easydel_->attributes) {
      if (field.copy_to_sub_configs && config.contains(field.name)) sub[field.name] = config[field.name];
    }
    return Status();
  }

  // ---- Mesh (top level only) ---------------------------------------------------------------------

  StatusOr<std::vector<int64_t>> IntList(const Json& config, const std::string& key) const {
    std::vector<int64_t> values;
    for (const Json& item : config[key]) values.push_back(item.get<int64_t>());
    return values;
  }

  Status ResolveMesh(Json& config) {
    const Json& names = config["sharding_axis_names"];
    std::set<std::string> seen;
    std::vector<std::string> axis_names;
    for (size_t i = 0; i < names.size(); ++i) {
      std::string name = names[i].get<std::string>();
      if (name.empty()) return Bad(PointerToElement("/sharding_axis_names", i), "axis names must not be empty");
      if (!seen.insert(name).second) {
        return Bad(PointerToElement("/sharding_axis_names", i),
                   "axis name '" + name + "' appears twice in " + JsonForMessage(names));
      }
      axis_names.push_back(name);
    }
    for (const char* key : {"sharding_axis_dims", "sharding_dcn_axis_dims"}) {
      if (config[key].is_null()) continue;
      EP_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntList(config, key));
      Status valid = ValidateAxisDims(dims, key);
      if (!valid.ok()) return Bad(std::string("/") + key, valid.diag().message);
      if (dims.size() != axis_names.size()) {
        return Bad(std::string("/") + key, std::string(key) + " has " + std::to_string(dims.size()) +
                                               " entries but sharding_axis_names has " +
                                               std::to_string(axis_names.size()) + " " + JsonForMessage(names));
      }
    }
    if (options_.devices) {
      EP_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntList(config, "sharding_axis_dims"));
      auto filled = FillAxisDims(dims, *options_.devices, "sharding_axis_dims");
      if (!filled.ok()) return Bad("/sharding_axis_dims", filled.status().diag().message);
      if (*filled != dims) {
        config["sharding_axis_dims"] = *filled;
        origin_["sharding_axis_dims"] = kDerived;
      }
    }
    // PartitionAxis entries that name no mesh axis would make every rule using them fail later.
    const Json& axis = config["partition_axis"];
    for (const auto& item : axis.items()) {
      std::vector<Json> entries = item.value().is_array() ? std::vector<Json>(item.value().begin(), item.value().end())
                                                          : std::vector<Json>{item.value()};
      for (const Json& entry : entries) {
        if (!entry.is_string() || seen.count(entry.get<std::string>())) continue;
        std::string message = "partition_axis." + item.key() + " names mesh axis '" + entry.get<std::string>() +
                              "', which is not in sharding_axis_names " + JsonForMessage(names);
        if (auto suggestion = SuggestClosest(entry.get<std::string>(), axis_names)) {
          message += " (did you mean '" + *suggestion + "'?)";
        }
        Warn(Where(PointerToMember("/partition_axis", item.key())), message);
      }
    }
    // 090a03b2 names the quantization kv_cache_quantization_config (base_config.py :962); c14e25c9
    // kv_cache_quantization_method (:544). Each version's attribute set has one of them.
    auto quantized = [&config](const char* key) {
      auto it = config.find(key);
      return it != config.end() && !it->is_null();
    };
    auto sharded = config.find("use_sharded_kv_caching");
    if ((quantized("kv_cache_quantization_config") || quantized("kv_cache_quantization_method")) &&
        sharded != config.end() && *sharded == true) {
      Warn(
          Where("/use_sharded_kv_caching"),
          "KV-cache quantization together with sharded KV caching: EasyDeL warns that this combination is unsupported");
    }
    return Status();
  }

  // ---- Output order --------------------------------------------------------------------------------

  // Input keys (file, overrides, --set) keep their order; each alias follows its stored name; added
  // keys follow in schema order: family fields, derived extras, EasyDeL attributes.
  Json Order(const Json& config, const FamilyChain& chain) const {
    std::map<std::string, size_t> rank;
    auto add_rank = [&](const std::string& name) { rank.emplace(name, rank.size()); };
    std::map<std::string, std::string> alias_of;  // stored -> alias
    for (const FamilySchema* schema : chain.schemas) {
      for (const FieldSpec& field : schema->fields) add_rank(field.name);
      for (const auto& [alias, stored] : schema->attribute_map) alias_of.emplace(stored, alias);
    }
    for (auto schema = chain.schemas.rbegin(); schema != chain.schemas.rend(); ++schema) {
      for (const DerivedSpec& derived : (*schema)->derived) add_rank(derived.name);
    }
    for (const FieldSpec& field : easydel_->attributes) add_rank(field.name);

    std::set<std::string> aliases;
    for (const auto& [stored, alias] : alias_of) aliases.insert(alias);
    // Member lookups through this index: ordered_json's own are linear, and a config may hold many
    // unknown keys.
    std::map<std::string_view, const Json*> members;
    for (const auto& [key, value] : config.get_ref<const Json::object_t&>()) members.emplace(key, &value);
    std::vector<std::string> input_keys, added_keys;
    std::set<std::string> is_input(input_order_.begin(), input_order_.end());
    for (const std::string& key : input_order_) {
      if (members.count(key) && !aliases.count(key)) input_keys.push_back(key);
    }
    for (const auto& item : config.items()) {
      if (!is_input.count(item.key()) && !aliases.count(item.key())) added_keys.push_back(item.key());
    }
    std::stable_sort(added_keys.begin(), added_keys.end(), [&](const std::string& a, const std::string& b) {
      size_t ra = rank.count(a) ? rank.at(a) : rank.size();
      size_t rb = rank.count(b) ? rank.at(b) : rank.size();
      return ra < rb;
    });
    Json ordered = Json::object();
    std::set<std::string> written;
    const auto write = [&](const std::string& key) {
      auto member = members.find(key);
      if (member == members.end() || !written.insert(key).second) return;
      AppendMember(ordered, key, *member->second);
    };
    for (const auto* keys : {&input_keys, &added_keys}) {
      for (const std::string& key : *keys) {
        write(key);
        if (auto alias = alias_of.find(key); alias != alias_of.end()) write(alias->second);
      }
    }
    return ordered;
  }

  const ConfigInput& input_;
  const ResolveOptions& options_;
  SchemaSet& schemas_;
  const EasyDelSchema* easydel_ = nullptr;
  std::string family_name_;
  std::map<std::string, std::string> origin_;    // top-level key -> provenance
  Json geometry_ = Json::object();               // ResolvedConfig::geometry
  DimKeysByObject dim_keys_;                     // ResolvedConfig::dim_keys
  std::map<std::string, std::string> set_text_;  // top-level key -> the --set that touched it
  std::vector<std::string> input_order_;         // top-level keys of file, overrides and --set, in order
  std::vector<Diag> diags_;
  int sub_config_depth_ = 0;
};

}  // namespace

StatusOr<ResolvedConfig> ResolveConfig(const ConfigInput& input, const ResolveOptions& options, SchemaSet& schemas) {
  Resolver resolver(input, options, schemas);
  return resolver.Run();
}

}  // namespace easyplan::schemas
