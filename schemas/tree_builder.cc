#include "schemas/tree_builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

#include "core/checked_math.h"
#include "schemas/easydel_version.h"
#include "schemas/layout_convert.h"

namespace easyplan::schemas {
namespace {

// Expands templates with a mutable scope: the resolved config plus the loop variables in force.
class Expander {
 public:
  Expander(const TreeTemplate& tree, const Json& config, const TreeOptions& options, DType param_dtype)
      : tree_(tree),
        scope_(VersionScope(config, options.easydel_version)),
        options_(options),
        param_dtype_(param_dtype) {
    const std::string method = StoredQuantization(config);
    const Json* quant = method.empty() ? nullptr : &config["quantization_config"];
    // --dtype asks for the dequantized view: every weight once, in that dtype, no scales.
    const bool stored_view = !options.dtype.has_value();
    if (stored_view && method == "mxfp4") {
      mxfp4_ = true;
      if (auto skip = quant->find("modules_to_not_convert"); skip != quant->end() && skip->is_array()) {
        for (const Json& pattern : *skip) {
          if (pattern.is_string()) not_converted_.push_back(pattern.get<std::string>());
        }
      }
    }
    if (stored_view && method == "fp8") {
      fp8_ = true;
      // (A const operator[] on a missing key is undefined: look "fmt" up with find.)
      auto fmt_it = quant->find("fmt");
      std::string fmt = fmt_it != quant->end() && fmt_it->is_string() ? fmt_it->get<std::string>() : "e4m3";
      fp8_dtype_ = fmt == "e5m2" ? DType::kFloat8E5M2 : DType::kFloat8E4M3FN;
      if (auto block = quant->find("weight_block_size"); block != quant->end() && block->is_array() &&
                                                         block->size() == 2 && (*block)[0].is_number_integer() &&
                                                         (*block)[1].is_number_integer()) {
        block_ = {(*block)[0].get<int64_t>(), (*block)[1].get<int64_t>()};
      }
    }
  }

  Status Run(std::vector<ExpandedTensor>& out) {
    out_ = &out;
    for (const NameRename& rename : tree_.easydel_renames) {
      EP_ASSIGN_OR_RETURN(bool active, Holds(rename.when, rename.loc));
      if (active) renames_.push_back(&rename);
    }
    return Group(tree_.root, "", "");
  }

 private:
  Status Error(const SourceLoc& loc, const std::string& message) const {
    SourceLoc where = loc;
    where.pointer.clear();
    return Status::BadInput(where, message);
  }

  StatusOr<Json> Eval(const Expression& expr, const SourceLoc& loc, const std::string& what) const {
    auto value = expr.Evaluate(scope_);
    if (!value.ok()) return Error(loc, what + " '" + expr.text() + "': " + value.status().diag().message);
    return *value;
  }

  StatusOr<bool> Holds(const std::optional<Expression>& expr, const SourceLoc& loc) const {
    if (!expr) return true;
    EP_ASSIGN_OR_RETURN(Json value, Eval(*expr, loc, "condition"));
    return IsTruthy(value);
  }

  StatusOr<int64_t> NonNegativeInt(const Expression& expr, const SourceLoc& loc, const std::string& what) const {
    EP_ASSIGN_OR_RETURN(Json value, Eval(expr, loc, what));
    if (!value.is_number_integer() || value.get<int64_t>() < 0) {
      return Error(loc, what + " '" + expr.text() + "' must be a non-negative integer, found " + JsonForMessage(value));
    }
    return value.get<int64_t>();
  }

  StatusOr<std::string> Name(const NameTemplate& name, const SourceLoc& loc) const {
    std::string text;
    for (const NameTemplate::Piece& piece : name.pieces) {
      if (!piece.expr) {
        text += piece.literal;
        continue;
      }
      EP_ASSIGN_OR_RETURN(Json value, Eval(*piece.expr, loc, "name placeholder"));
      if (value.is_number_integer()) {
        text += std::to_string(value.get<int64_t>());
      } else if (value.is_string()) {
        text += value.get<std::string>();
      } else {
        return Error(loc, "name placeholder '{" + piece.expr->text() + "}' in '" + name.text +
                              "' must be an integer or a string, found " + JsonForMessage(value));
      }
    }
    return text;
  }

  Status Group(const GroupTemplate& group, const std::string& hf_prefix, const std::string& ed_prefix) {
    EP_ASSIGN_OR_RETURN(bool present, Holds(group.when, group.loc));
    if (!present) return Status();
    // Layout restrictions nest: inside an hf-only group everything is hf-only.
    bool outer_hf = in_hf_, outer_easydel = in_easydel_;
    in_hf_ = in_hf_ && group.in_hf;
    in_easydel_ = in_easydel_ && group.in_easydel;
    Status status = Repeat(group, hf_prefix, ed_prefix);
    in_hf_ = outer_hf;
    in_easydel_ = outer_easydel;
    return status;
  }

  Status Repeat(const GroupTemplate& group, const std::string& hf_prefix, const std::string& ed_prefix) {
    if (group.var.empty()) return Body(group, hf_prefix, ed_prefix);
    EP_ASSIGN_OR_RETURN(int64_t count, NonNegativeInt(*group.count, group.loc, "count"));
    if (count > options_.max_tensors) {
      return Error(group.loc,
                   fmt::format("'{}' repeats {} times, more than the tensor limit {} (raise it with --max-tensors)",
                               group.var, count, options_.max_tensors));
    }
    std::optional<Json> shadowed;
    if (scope_.contains(group.var)) shadowed = scope_[group.var];
    for (int64_t k = 0; k < count; ++k) {
      scope_[group.var] = k;
      EP_RETURN_IF_ERROR(Body(group, hf_prefix, ed_prefix));
    }
    if (shadowed) {
      scope_[group.var] = *shadowed;
    } else {
      scope_.erase(group.var);
    }
    return Status();
  }

  Status Body(const GroupTemplate& group, const std::string& hf_prefix, const std::string& ed_prefix) {
    if (!group.scope.empty()) {
      // The body sees only the sub-config (its own hidden_size, not the wrapper's) and the group's
      // own loop variable.
      auto it = scope_.find(group.scope);
      if (it == scope_.end() || !it->is_object()) {
        return Error(group.loc, "the config has no '" + group.scope + "' object (needed for its tensors)");
      }
      Json outer = std::move(scope_);
      scope_ = outer[group.scope];
      if (!group.var.empty()) scope_[group.var] = outer[group.var];  // a scoped loop still sees its variable
      Status status = Bound(group, hf_prefix, ed_prefix);
      scope_ = std::move(outer);
      return status;
    }
    return Bound(group, hf_prefix, ed_prefix);
  }

  Status Bound(const GroupTemplate& group, const std::string& hf_prefix, const std::string& ed_prefix) {
    if (!group.let.empty()) {
      // Bind the names for the body, then restore what they shadowed.
      std::vector<std::pair<std::string, std::optional<Json>>> saved;
      for (const auto& [name, expr] : group.let) {
        EP_ASSIGN_OR_RETURN(Json value, Eval(expr, group.loc, "let " + name));
        saved.emplace_back(name, scope_.contains(name) ? std::optional<Json>(scope_[name]) : std::nullopt);
        scope_[name] = std::move(value);
      }
      Status status = Items(group, hf_prefix, ed_prefix);
      for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
        if (it->second) {
          scope_[it->first] = *it->second;
        } else {
          scope_.erase(it->first);
        }
      }
      return status;
    }
    return Items(group, hf_prefix, ed_prefix);
  }

  Status Items(const GroupTemplate& group, const std::string& hf_prefix, const std::string& ed_prefix) {
    EP_ASSIGN_OR_RETURN(std::string prefix, Name(group.prefix, group.loc));
    EP_ASSIGN_OR_RETURN(std::string easydel_prefix, Name(group.easydel_prefix, group.loc));
    std::string hf = hf_prefix + prefix;
    std::string ed = ed_prefix + easydel_prefix + prefix;
    for (const TreeItem& item : group.items) {
      if (item.tensor) {
        EP_RETURN_IF_ERROR(Tensor(*item.tensor, hf, ed));
      } else {
        EP_RETURN_IF_ERROR(Group(*item.group, hf, ed));
      }
    }
    return Status();
  }

  Status Tensor(const TensorTemplate& tensor, const std::string& hf_prefix, const std::string& ed_prefix) {
    if (tensor.role == TensorRole::kBuffer && !options_.include_buffers) return Status();
    EP_ASSIGN_OR_RETURN(bool present, Holds(tensor.when, tensor.loc));
    bool in_easydel = in_easydel_ && tensor.in_easydel && present;
    if (tensor.easydel_when) {
      EP_ASSIGN_OR_RETURN(bool easydel_present, Holds(tensor.easydel_when, tensor.loc));
      in_easydel = in_easydel_ && tensor.in_easydel && easydel_present;
    }
    bool in_hf = in_hf_ && tensor.in_hf && present;
    if (!in_hf && !in_easydel) return Status();
    EP_ASSIGN_OR_RETURN(std::string name, Name(tensor.name, tensor.loc));
    std::vector<int64_t> dims;
    for (size_t d = 0; d < tensor.shape.size(); ++d) {
      EP_ASSIGN_OR_RETURN(int64_t dim, NonNegativeInt(tensor.shape[d], tensor.loc,
                                                      fmt::format("tensor '{}{}': dim {}", hf_prefix, name, d)));
      dims.push_back(dim);
    }
    int64_t experts = 0;
    if (tensor.experts) {
      EP_ASSIGN_OR_RETURN(
          experts, NonNegativeInt(*tensor.experts, tensor.loc, fmt::format("tensor '{}{}': experts", hf_prefix, name)));
      if (experts == 0) return Status();
    }
    Shape shape(std::move(dims));
    std::optional<int64_t> numel = shape.NumElements();
    if (!numel || (experts > 0 && !CheckedMul(*numel, experts))) {
      return Error(tensor.loc, fmt::format("tensor '{}{}' with shape {} has more elements than fit in 64 bits",
                                           hf_prefix, name, shape.ToString()));
    }
    // Checked: an expert count near INT64_MAX must hit the limit, not wrap past it.
    bool fp8_weight = fp8_ && tensor.quantizable && shape.rank() == 2;
    // MXFP4 (gpt-oss): stacked expert weights [E, in, out], in the checkpoint as 4-bit blocks along `in`.
    bool mxfp4_weight =
        mxfp4_ && tensor.quantizable && shape.rank() == 3 && experts == 0 && !NotConverted(hf_prefix + name);
    std::optional<int64_t> instances = CheckedMul(std::max<int64_t>(experts, 1), fp8_weight || mxfp4_weight ? 2 : 1);
    std::optional<int64_t> count = instances ? CheckedAdd(count_, *instances) : std::nullopt;
    if (count) count_ = *count;
    if (!count || count_ > options_.max_tensors) {
      return Error(tensor.loc, fmt::format("the tree has more than {} tensors (the limit; raise it with --max-tensors)",
                                           options_.max_tensors));
    }
    ExpandedTensor expanded;
    expanded.hf_name = hf_prefix + name;
    NamedShape easydel = HfToEasyDel(EasyDelRenamed(ed_prefix + name), shape, tensor.kind, experts);
    expanded.easydel_name = std::move(easydel.name);
    expanded.easydel_shape = std::move(easydel.shape);
    expanded.hf_shape = std::move(shape);
    expanded.dtype = tensor.dtype.value_or(param_dtype_);
    expanded.role = tensor.role;
    expanded.experts = experts;
    expanded.in_hf = in_hf;
    expanded.in_easydel = in_easydel;
    expanded.loc = tensor.loc;
    if (!tensor.easydel_link.text.empty()) {
      EP_ASSIGN_OR_RETURN(std::string link, Name(tensor.easydel_link, tensor.loc));
      expanded.easydel_link = hf_prefix + link;
    }
    if (!tensor.module.text.empty()) {
      EP_ASSIGN_OR_RETURN(expanded.module, Name(tensor.module, tensor.loc));
    }
    if (fp8_weight) {
      // FP8 with a float32 scale per weight block.
      ExpandedTensor weight = expanded;
      weight.dtype = fp8_dtype_;
      ExpandedTensor scale = weight;
      scale.hf_name += "_scale_inv";
      scale.hf_shape = Shape{CeilDiv(weight.hf_shape[0], block_[0]), CeilDiv(weight.hf_shape[1], block_[1])};
      scale.dtype = DType::kFloat32;
      PushQuantized(std::move(expanded), std::move(weight), std::move(scale));
      return Status();
    }
    if (mxfp4_weight) {
      // transformers' Mxfp4 format (integrations/mxfp4.py): per expert and output row, the input dim in
      // blocks of 32 FP4 (e2m1) values packed two per byte, `<name>_blocks` [E, out, in/32, 16] uint8, with
      // one shared power-of-two exponent per block, `<name>_scales` [E, out, in/32] uint8 (E8M0).
      const int64_t blocks = CeilDiv(expanded.hf_shape[1], kMxfp4Block);
      ExpandedTensor packed = expanded;
      packed.hf_name += "_blocks";
      packed.hf_shape = Shape{expanded.hf_shape[0], expanded.hf_shape[2], blocks, kMxfp4Block / 2};
      packed.dtype = DType::kUInt8;
      ExpandedTensor scale = packed;
      scale.hf_name = expanded.hf_name + "_scales";
      scale.hf_shape = Shape{expanded.hf_shape[0], expanded.hf_shape[2], blocks};
      PushQuantized(std::move(expanded), std::move(packed), std::move(scale));
      return Status();
    }
    out_->push_back(std::move(expanded));
    return Status();
  }

  // A quantized weight: the checkpoint (HF layout) stores `stored` and its `scale`; EasyDeL dequantizes
  // at load, so its parameter is `dequantized`, in the parameter dtype.
  void PushQuantized(ExpandedTensor dequantized, ExpandedTensor stored, ExpandedTensor scale) {
    const bool in_hf = dequantized.in_hf, in_easydel = dequantized.in_easydel;
    dequantized.in_hf = false;
    stored.in_easydel = scale.in_easydel = false;
    // The stored blocks and scales have their own dims: no EasyDeL tensor's spec fits them dim for dim.
    stored.easydel_link.clear();
    scale.easydel_link.clear();
    scale.role = TensorRole::kScale;
    if (in_easydel) out_->push_back(std::move(dequantized));
    if (in_hf) {
      out_->push_back(std::move(stored));
      out_->push_back(std::move(scale));
    }
  }

  // quantization_config.modules_to_not_convert: module names, `*` matching any run of characters
  // ("model.layers.*.self_attn"); a tensor inside such a module stays in the parameter dtype.
  // The template's first easydel_renames entry whose `from` starts `name`, applied.
  std::string EasyDelRenamed(std::string name) const {
    for (const NameRename* rename : renames_) {
      if (name.starts_with(rename->from)) return rename->to + name.substr(rename->from.size());
    }
    return name;
  }

  bool NotConverted(const std::string& hf_name) const {
    for (const std::string& pattern : not_converted_) {
      if (GlobPrefix(pattern, hf_name)) return true;
    }
    return false;
  }

  // Whether `pattern` matches `name` up to a '.' boundary (or all of it). Dynamic programming over
  // (pattern prefix, name prefix), O(|pattern| x |name|), so no pattern of stars can make it slow.
  static bool GlobPrefix(std::string_view pattern, std::string_view name) {
    std::vector<char> matches(name.size() + 1, 0), next(name.size() + 1, 0);
    matches[0] = 1;  // the empty pattern matches the empty prefix
    for (char p : pattern) {
      std::fill(next.begin(), next.end(), 0);
      for (size_t j = 0; j <= name.size(); ++j) {
        if (p == '*') {
          next[j] = matches[j] || (j > 0 && next[j - 1]);
        } else if (j > 0 && matches[j - 1] && name[j - 1] == p) {
          next[j] = 1;
        }
      }
      matches.swap(next);
    }
    for (size_t j = 0; j <= name.size(); ++j) {
      if (matches[j] && (j == name.size() || name[j] == '.')) return true;
    }
    return false;
  }

  static constexpr int64_t kMxfp4Block = 32;

  static int64_t CeilDiv(int64_t a, int64_t b) { return b <= 0 ? a : a / b + (a % b != 0 ? 1 : 0); }

  const TreeTemplate& tree_;
  Json scope_;
  const TreeOptions& options_;
  DType param_dtype_;
  bool fp8_ = false;
  bool mxfp4_ = false;
  std::vector<const NameRename*> renames_;  // the template's easydel_renames whose `when` holds
  std::vector<std::string> not_converted_;
  DType fp8_dtype_ = DType::kFloat8E4M3FN;
  std::array<int64_t, 2> block_ = {128, 128};
  int64_t count_ = 0;
  bool in_hf_ = true;
  bool in_easydel_ = true;
  std::vector<ExpandedTensor>* out_ = nullptr;
};

std::string ExpertName(const std::string& name, int64_t expert) {
  std::string text = name;
  size_t pos = text.find(kExpertPlaceholder);
  if (pos != std::string::npos) text.replace(pos, kExpertPlaceholder.size(), std::to_string(expert));
  return text;
}

}  // namespace

std::string StoredQuantization(const Json& config) {
  auto quant = config.find("quantization_config");
  if (quant == config.end() || !quant->is_object()) return "";
  auto method = quant->find("quant_method");
  if (method == quant->end() || !method->is_string()) return "";
  const std::string name = method->get<std::string>();
  return name == "fp8" || name == "mxfp4" ? name : "";
}

StatusOr<DType> ParamDType(const Json& config, const std::optional<DType>& override_dtype) {
  if (override_dtype) return *override_dtype;
  for (const char* key : {"torch_dtype", "dtype"}) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) continue;
    if (!it->is_string()) {
      return Status::BadInput({"", std::string("/") + key},
                              std::string("expected a dtype name, found ") + std::string(JsonTypeName(*it)));
    }
    if (auto dtype = ParseDType(it->get<std::string>())) return *dtype;
    return Status::BadInput({"", std::string("/") + key}, "unknown dtype '" + it->get<std::string>() + "'");
  }
  return DType::kFloat32;
}

StatusOr<std::vector<ExpandedTensor>> ExpandTreeTemplate(const TreeTemplate& tree, const Json& config,
                                                         const TreeOptions& options) {
  EP_ASSIGN_OR_RETURN(DType param_dtype, ParamDType(config, options.dtype));
  std::vector<ExpandedTensor> out;
  Expander expander(tree, config, options, param_dtype);
  EP_RETURN_IF_ERROR(expander.Run(out));
  return out;
}

StatusOr<ParamTree> BuildParamTree(const TreeTemplate& tree, const Json& config, const TreeOptions& options) {
  EP_ASSIGN_OR_RETURN(std::vector<ExpandedTensor> expanded, ExpandTreeTemplate(tree, config, options));
  ParamTree result;
  result.model_type = tree.model_type;
  result.layout = options.layout;
  if (options.layout == Layout::kEasyDel) {
    for (ExpandedTensor& tensor : expanded) {
      if (tensor.in_easydel) {
        result.tensors.push_back(
            {std::move(tensor.easydel_name), std::move(tensor.easydel_shape), tensor.dtype, tensor.role});
      }
    }
    return result;
  }
  // HF layout. A run of per-expert tensors of one expert container is listed expert by expert
  // (experts.0.gate_proj, experts.0.up_proj, ..., experts.1.gate_proj), as the module stores them.
  for (size_t i = 0; i < expanded.size();) {
    const ExpandedTensor& first = expanded[i];
    if (!first.in_hf) {
      ++i;
      continue;
    }
    if (first.experts == 0) {
      result.tensors.push_back({first.hf_name, first.hf_shape, first.dtype, first.role});
      ++i;
      continue;
    }
    std::string container = first.hf_name.substr(0, first.hf_name.find(kExpertPlaceholder));
    auto same_container = [&](const ExpandedTensor& tensor) {
      return tensor.experts == first.experts && tensor.hf_name.starts_with(container) &&
             tensor.hf_name.compare(container.size(), kExpertPlaceholder.size(), kExpertPlaceholder) == 0;
    };
    // The run: this container's per-expert tensors, skipping EasyDeL-only entries in between.
    std::vector<size_t> run;
    size_t end = i;
    while (end < expanded.size() && (!expanded[end].in_hf || same_container(expanded[end]))) {
      if (expanded[end].in_hf) run.push_back(end);
      ++end;
    }
    for (int64_t e = 0; e < first.experts; ++e) {
      for (size_t k : run) {
        const ExpandedTensor& tensor = expanded[k];
        result.tensors.push_back({ExpertName(tensor.hf_name, e), tensor.hf_shape, tensor.dtype, tensor.role});
      }
    }
    i = end;
  }
  return result;
}

}  // namespace easyplan::schemas
