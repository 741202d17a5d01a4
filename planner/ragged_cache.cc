#include "planner/ragged_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/checked_math.h"
#include "planner/runtime_modes.h"

namespace easyplan::planner {
namespace {

int64_t AlignUp(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

// The mesh size of a partition_axis attribute's value (a name, a list of names, or null = 1).
int64_t AttributeMeshSize(const Json& config, const std::string& attribute, const Mesh& mesh) {
  auto axis = config.find("partition_axis");
  if (axis == config.end() || !axis->is_object()) return 1;
  auto value = axis->find(attribute);
  if (value == axis->end()) return 1;
  PartitionSpec::Entry entry;
  if (value->is_string()) entry.push_back(value->get<std::string>());
  if (value->is_array()) {
    for (const Json& name : *value) {
      if (name.is_string()) entry.push_back(name.get<std::string>());
    }
  }
  return AxisProduct(entry, mesh, nullptr);
}

}  // namespace

StatusOr<RaggedCacheReport> BuildRaggedCache(const ActivationTable& table, const rules::Presets& presets,
                                             const Json& config, const RaggedCacheOptions& options,
                                             const CacheGeometry& geometry, DType kvdtype, ActivationBuilder& builder) {
  const Mesh& mesh = builder.mesh();
  if (options.version != 2 && options.version != 3) {
    return Status::BadInput({}, fmt::format("--cache-version v{} is not a RaggedPagesCache version", options.version),
                            {"expected v2 or v3 (the default)"});
  }
  if (options.page_size < 1) return Status::BadInput({}, "--page-size must be at least 1");
  if (options.num_pages < 1) {
    return Status::BadInput({},
                            "--cache ragged needs --num-pages N: EasyDeL sizes the page pool from the free HBM of "
                            "the devices at run time, which an offline planner cannot know",
                            {"eSurge's pool is free_hbm * kv_head_shards * dp // (2 * layers * page_size * kv_heads "
                             "* head_dim * bytes), rounded down to a multiple of dp"});
  }
  if (geometry.mla) {
    return Status::BadInput({},
                            "--cache ragged: MLA configs use EasyDeL's multi-latent pages cache, which easyplan "
                            "does not model");
  }
  const ActivationTable::RaggedCacheAxes& axes = table.ragged_cache();
  RaggedCacheReport report;
  report.options = options;
  report.kv_heads = geometry.key_heads;
  report.head_dim = geometry.key_dim;
  report.layers = geometry.kv_layers;
  report.requested_dtype = report.dtype = kvdtype;

  // Sizes: the page axis's data-parallel size, and the shard count kv_head_axis asks for.
  EP_ASSIGN_OR_RETURN(PartitionSpec page, ResolveAxes(axes.page, presets, config, Mode::kTrain));
  EP_ASSIGN_OR_RETURN(PartitionSpec head, ResolveAxes(axes.head_group, presets, config, Mode::kTrain));
  std::string unknown;
  report.dp_size = page.size() > 0 ? AxisProduct(page[0], mesh, &unknown) : 1;
  report.kv_head_axis_size = AttributeMeshSize(config, axes.shard_count_from, mesh);
  if (options.num_pages % report.dp_size != 0) {
    return Status::BadInput(
        {},
        fmt::format("--num-pages {} is not a multiple of the data-parallel size {}: EasyDeL "
                    "rounds the page count down to a multiple of it",
                    options.num_pages, report.dp_size),
        {fmt::format("use {}",
                     std::max<int64_t>(report.dp_size, options.num_pages / report.dp_size * report.dp_size))});
  }
  const int64_t kvh = report.kv_heads, head_dim = report.head_dim;
  int64_t shards = report.kv_head_axis_size;
  Shape shape;
  if (options.version == 2) {
    if (shards > 1 && (2 * kvh) % shards != 0) {
      shards = 1;
      report.heads_replicated = true;
    }
    shape = Shape{options.num_pages, options.page_size, 2 * kvh, head_dim};
  } else {
    struct V3 {
      int64_t packing = 1, combined = 0, groups = 0;
    };
    auto geometry_of = [&](DType dtype) -> std::optional<V3> {
      const int bits = DTypeBits(dtype);
      if (bits <= 0 || bits > 32) return std::nullopt;
      V3 v3;
      v3.packing = 32 / bits;
      v3.combined = AlignUp(head_dim == 64 ? kvh : 2 * kvh, v3.packing);
      v3.groups = v3.combined / v3.packing;
      return v3;
    };
    std::optional<V3> v3 = geometry_of(kvdtype);
    if (!v3) {
      return Status::BadInput({}, fmt::format("--cache ragged v3 packs 32-bit words, so kvdtype {} (wider than 32 "
                                              "bits) cannot be stored",
                                              DTypeName(kvdtype)));
    }
    if (shards > 1 && v3->groups % shards != 0) {
      bool found = false;
      for (const std::string& name : axes.upcast) {
        const std::optional<DType> candidate = ParseDType(name);
        if (!candidate || *candidate == kvdtype) continue;
        const std::optional<V3> trial = geometry_of(*candidate);
        if (trial && trial->groups % shards == 0) {
          report.dtype = *candidate;
          report.upcast = true;
          v3 = trial;
          found = true;
          break;
        }
      }
      if (!found) {
        shards = 1;
        report.heads_replicated = true;
      }
    }
    report.packing = v3->packing;
    report.combined_heads = v3->combined;
    report.groups = v3->groups;
    report.head_dim_pad = head_dim == 64 ? 128 : AlignUp(head_dim, 128);
    shape = Shape{options.num_pages, options.page_size, report.groups, report.packing, report.head_dim_pad};
  }
  report.kv_head_shards = shards;

  std::vector<PartitionSpec::Entry> entries(static_cast<size_t>(shape.rank()));
  if (report.dp_size > 1 && page.size() > 0) entries[0] = page[0];
  if (shards > 1 && head.size() > 0) entries[2] = head[0];
  EP_ASSIGN_OR_RETURN(report.pages, builder.Lay("ragged_cache.kv_pages", shape, report.dtype,
                                                PartitionSpec(std::move(entries)), "the ragged cache"));
  report.pages.layers = geometry.kv_layers;  // linear-attention layers keep no pages
  const int64_t layers = std::max<int64_t>(geometry.kv_layers, 1);
  auto bytes = CheckedMul(report.pages.bytes, layers);
  auto per_device = CheckedMul(report.pages.bytes_per_device, layers);
  if (!bytes || !per_device) return Status::BadInput({}, "the ragged cache's size overflows int64");
  report.bytes = *bytes;
  report.bytes_per_device = *per_device;

  EP_ASSIGN_OR_RETURN(report.query, ResolveAxes(axes.query, presets, config, Mode::kTrain));
  EP_ASSIGN_OR_RETURN(report.kv, ResolveAxes(axes.kv, presets, config, Mode::kTrain));
  if (shards <= 1) report.kv = PartitionSpec(std::vector<PartitionSpec::Entry>(report.kv.entries().size()));
  EP_ASSIGN_OR_RETURN(report.sinks, ResolveAxes(axes.sinks, presets, config, Mode::kTrain));
  return report;
}

}  // namespace easyplan::planner
