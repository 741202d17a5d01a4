#include "planner/attention_kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "planner/layout.h"

namespace easyplan::planner {

std::vector<std::string> KernelNames(const ActivationTable& table) {
  std::vector<std::string> names;
  for (const ActivationTable::Kernel& kernel : table.kernels()) {
    names.push_back(kernel.name);
    for (const std::string& alias : kernel.easydel) {
      if (alias != kernel.name) names.push_back(alias);
    }
  }
  return names;
}

StatusOr<const ActivationTable::Kernel*> SelectKernel(const ActivationTable& table, const Json& config, Mode mode,
                                                      const std::string& requested, std::string* easydel_name,
                                                      std::string* selected_by, std::string* note) {
  if (!requested.empty()) {
    const ActivationTable::Kernel* kernel = table.FindKernel(requested);
    if (!kernel) {
      return Status::BadInput({}, "--kernel '" + requested + "' is not an attention kernel easyplan models",
                              {fmt::format("expected one of {}", fmt::join(KernelNames(table), ", "))});
    }
    *easydel_name = kernel->easydel.empty() ? kernel->name : kernel->easydel.front();
    *selected_by = "--kernel";
    return kernel;
  }
  auto mechanism = [&](const char* key) -> std::string {
    auto it = config.find(key);
    return it != config.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  std::string name = mechanism("attn_mechanism");
  *selected_by = "attn_mechanism";
  if (mode == Mode::kDecode && !mechanism("decode_attn_mechanism").empty()) {
    name = mechanism("decode_attn_mechanism");
    *selected_by = "decode_attn_mechanism";
  }
  if (name.empty()) name = "vanilla";  // EasyDeL's default
  *easydel_name = name;
  if (name == "auto") {
    *note = fmt::format(
        "{} is auto: EasyDeL picks the kernel at run time from the platform (get_optimal_config); pass --kernel",
        *selected_by);
    return static_cast<const ActivationTable::Kernel*>(nullptr);
  }
  const ActivationTable::Kernel* kernel = table.FindKernel(name);
  if (!kernel) {
    *note = fmt::format("{} is {}, a kernel easyplan does not model; pass --kernel to see one that it does",
                        *selected_by, name);
  }
  return kernel;
}

StatusOr<KernelReport> BuildKernelReport(const ActivationTable& table, const rules::Presets& presets,
                                         const Json& config, const Mesh& mesh, const ActivationTable::Kernel& kernel,
                                         const KernelStep& step, const CacheGeometry& geometry) {
  KernelReport report;
  report.name = kernel.name;
  report.mode_dim = kernel.mode_dim;
  report.layout = kernel.layout == "bhtd" ? AttnLayout::kBhtd : AttnLayout::kBthd;
  report.qkv_mni = kernel.qkv_mni;
  report.shard_map = kernel.shard_map;
  report.transposed = kernel.transposed;
  const std::optional<int64_t> heads = step.heads > 0 ? std::optional<int64_t>(step.heads) : std::nullopt;
  // get_mode(query, BTHD=True) looks at query.shape[1]: the query length (1 in decode; --seq, or more
  // than 1 when it is not given, otherwise). Ring and blocksparse test shape[2], the head count.
  if (kernel.mode_dim == 1) {
    if (step.mode == Mode::kDecode || step.seq) report.tested = step.query_length;
  } else {
    report.tested = heads;
  }
  report.kernel_mode = report.tested == 1 ? Mode::kDecode : Mode::kTrain;
  if (kernel.decode_only && report.kernel_mode != Mode::kDecode) {
    return Status::BadInput(
        {},
        fmt::format("the {} kernel ({}) runs only in decode: with a query of length {} EasyDeL raises "
                    "ValueError(\"{}\")",
                    kernel.name, kernel.easydel.empty() ? kernel.name : kernel.easydel.front(),
                    report.tested ? std::to_string(*report.tested) : "more than 1", kernel.error),
        {"use --mode decode, or a kernel for the prompt (attn_mechanism)"});
  }
  AttnOptions options;
  options.mode = report.kernel_mode;
  options.layout = report.layout;
  options.qkv_mni = kernel.qkv_mni;
  options.softmax_aux_ndim = step.softmax_aux_ndim;
  EP_ASSIGN_OR_RETURN(AttnShardingRules rules, GetShardings(table, presets, config, options));
  AttnOptions flat = options;
  if (flat.softmax_aux_ndim) flat.softmax_aux_ndim = 1;
  EP_ASSIGN_OR_RETURN(AttnShardingRules flat_rules, GetShardings(table, presets, config, flat));
  auto field_spec = [&](const std::string& name, bool flatten) -> const PartitionSpec* {
    for (const auto& [field, spec] : AttnFields(flatten ? flat_rules : rules)) {
      if (field == name) return spec;
    }
    return nullptr;
  };

  // The tensors' shapes, with --batch/--seq.
  std::map<std::string, Shape> shapes;
  if (step.batch && step.seq && heads) {
    const int64_t batch = *step.batch, kv_length = *step.seq;
    auto four = [&](int64_t length, int64_t count, int64_t dim) {
      return kernel.transposed ? Shape{batch, count, length, dim} : Shape{batch, length, count, dim};
    };
    shapes["query"] = four(step.query_length, *heads, geometry.key_dim);
    shapes["key"] = four(kv_length, geometry.key_heads, geometry.key_dim);
    shapes["value"] = four(kv_length, geometry.value_heads, geometry.value_dim);
    shapes["output"] = four(step.query_length, *heads, geometry.value_dim);
    shapes["query3d"] = Shape{batch, *heads, geometry.key_dim};
    shapes["bias"] = Shape{batch, *heads, step.query_length, kv_length};
    shapes["batch"] = Shape{batch};
  }
  for (const ActivationTable::KernelSpec& entry : kernel.specs) {
    KernelSpecReport spec;
    spec.name = entry.name;
    if (entry.field.empty()) {
      spec.spec = PartitionSpec(std::vector<PartitionSpec::Entry>(static_cast<size_t>(entry.rank)));
    } else {
      const PartitionSpec* source = field_spec(entry.field, entry.flatten);
      if (!source) continue;  // no softmax aux: the kernel passes None
      std::vector<PartitionSpec::Entry> entries;
      if (!entry.pick.empty()) {
        for (int dim : entry.pick) entries.push_back(dim < source->size() ? (*source)[dim] : PartitionSpec::Entry{});
      } else {
        entries = source->entries();
        if (entry.keep) {
          for (int dim = 0; dim < static_cast<int>(entries.size()); ++dim) {
            if (std::find(entry.keep->begin(), entry.keep->end(), dim) == entry.keep->end()) entries[dim].clear();
          }
        }
      }
      spec.spec = PartitionSpec(std::move(entries));
    }
    spec.applied = spec.spec;
    spec.corrected = kernel.corrected && !entry.tensor.empty();
    if (auto it = shapes.find(entry.tensor); it != shapes.end()) {
      spec.shape = it->second;
      if (spec.corrected) spec.applied = CorrectSpec(it->second, spec.spec, mesh, UnevenMode::kReplicate).spec;
    }
    report.specs.push_back(std::move(spec));
  }
  return report;
}

}  // namespace easyplan::planner
