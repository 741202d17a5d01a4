#include "planner/export_hlo.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "core/enum_table.h"
#include "core/status.h"
#include "planner/export_lines.h"

namespace easyplan::planner {
namespace {

// OpSharding::Type values, as XLA numbers them (JAX sorts unused-axis groups by this value).
enum class SubgroupType { kReplicated = 0, kManual = 4, kUnreduced = 6 };

// The names XLA's HloSharding::ToString gives OpSharding types.
constexpr EnumName<SubgroupType> kSubgroupNames[] = {
    {SubgroupType::kReplicated, "replicated"},
    {SubgroupType::kManual, "manual"},
    {SubgroupType::kUnreduced, "unreduced"},
};

std::string_view SubgroupName(SubgroupType type) { return NameOf(kSubgroupNames, type); }

int64_t Product(const std::vector<int64_t>& values) {
  int64_t product = 1;
  for (int64_t v : values) product *= v;
  return product;
}

// XLA's CanonicalizeIotaDims: drop size-1 reshape dims, then merge runs of perm that are consecutive
// and increasing, until nothing changes. An empty result is [1] / [0].
void CanonicalizeIotaDims(std::vector<int64_t>* dims, std::vector<int>* perm) {
  if (dims->size() > 1) {
    while (true) {
      bool changed = false;
      std::vector<int> old_to_new(dims->size());
      int new_ndims = 0;
      for (size_t i = 0; i < dims->size(); ++i) old_to_new[i] = (*dims)[i] == 1 ? -1 : new_ndims++;
      if (static_cast<size_t>(new_ndims) != dims->size()) {
        std::vector<int64_t> new_dims;
        std::vector<int> new_perm;
        for (size_t i = 0; i < dims->size(); ++i) {
          if (old_to_new[i] >= 0) new_dims.push_back((*dims)[i]);
          const int mapped = old_to_new[static_cast<size_t>((*perm)[i])];
          if (mapped >= 0) new_perm.push_back(mapped);
        }
        *dims = std::move(new_dims);
        *perm = std::move(new_perm);
      }
      for (size_t i = 1, base = 0; i < dims->size(); ++i) {
        const int base_dim = (*perm)[base];
        const int dim = (*perm)[i];
        if (base_dim + static_cast<int>(i - base) == dim) {
          (*dims)[static_cast<size_t>(base_dim)] *= (*dims)[static_cast<size_t>(dim)];
          (*dims)[static_cast<size_t>(dim)] = 1;
          changed = true;
        } else {
          base = i;
        }
      }
      if (!changed) break;
    }
  }
  if (dims->empty()) {
    *dims = {1};
    *perm = {0};
  }
}

// A TileAssignment in iota form, canonical as IotaTileAssignment::Create leaves it.
struct IotaTiles {
  std::vector<int64_t> dims;          // the tile assignment's shape
  std::vector<int64_t> reshape_dims;  // canonical
  std::vector<int> perm;

  static IotaTiles Create(std::vector<int64_t> dims, std::vector<int64_t> reshape_dims, std::vector<int> perm) {
    CanonicalizeIotaDims(&reshape_dims, &perm);
    return IotaTiles{std::move(dims), std::move(reshape_dims), std::move(perm)};
  }

  // numpy: iota(prod).reshape(reshape_dims).transpose(perm).ravel().
  std::vector<int64_t> Devices() const {
    const size_t n = reshape_dims.size();
    std::vector<int64_t> strides(n, 1);  // row-major strides of the reshaped iota
    for (size_t i = n - 1; i-- > 0;) strides[i] = strides[i + 1] * reshape_dims[i + 1];
    std::vector<int64_t> out;
    const int64_t total = Product(reshape_dims);
    out.reserve(static_cast<size_t>(total));
    std::vector<int64_t> index(n, 0);  // index into the transposed array
    for (int64_t k = 0; k < total; ++k) {
      int64_t device = 0;
      for (size_t i = 0; i < n; ++i) device += index[i] * strides[static_cast<size_t>(perm[i])];
      out.push_back(device);
      for (size_t i = n; i-- > 0;) {
        if (++index[i] < reshape_dims[static_cast<size_t>(perm[i])]) break;
        index[i] = 0;
      }
    }
    return out;
  }
};

// An HloSharding with a tile assignment: the V2 iota form, or the V1 explicit device list.
struct Tiled {
  std::vector<int64_t> dims;
  std::optional<IotaTiles> iota;
  std::vector<int64_t> devices;  // when !iota
  bool replicate_on_last_tile_dim = false;
  std::vector<SubgroupType> subgroup_types;

  std::string ToString() const {
    std::string text = fmt::format("{{devices=[{}]", fmt::join(dims, ","));
    if (iota) {
      text += fmt::format("<=[{}]", fmt::join(iota->reshape_dims, ","));
      if (iota->reshape_dims.size() > 1) text += fmt::format("T({})", fmt::join(iota->perm, ","));
    } else {
      text += fmt::format("{}", fmt::join(devices, ","));
    }
    if (replicate_on_last_tile_dim) text += " last_tile_dim_replicate";
    if (!subgroup_types.empty()) {
      std::vector<std::string> names;
      for (SubgroupType type : subgroup_types) names.emplace_back(SubgroupName(type));
      text += fmt::format(" last_tile_dims={{{}}}", fmt::join(names, ", "));
    }
    return text + "}";
  }
};

// XLA's GroupMinorIotaDimsSorted, quirks included: once the group is complete the loop still splits
// the next dim (by itself), and the grouped suffix of the permutation is sorted.
bool GroupMinorIotaDimsSorted(const std::vector<int64_t>& dims, const std::vector<int>& perm, int64_t group_size,
                              std::vector<int64_t>* new_dims, std::vector<int>* new_perm) {
  int grouped_dims = 0;
  std::optional<std::pair<int, int64_t>> split_dim_and_size;
  for (int i = static_cast<int>(perm.size()) - 1; i >= 0; --i) {
    const int dim = perm[static_cast<size_t>(i)];
    const int64_t dim_size = dims[static_cast<size_t>(dim)];
    if (dim_size <= group_size) {
      if (group_size % dim_size != 0) return false;
      group_size /= dim_size;
      ++grouped_dims;
    } else {
      if (dim_size % group_size != 0) return false;
      split_dim_and_size.emplace(dim, dim_size / group_size);
      ++grouped_dims;
      group_size = 1;
      break;
    }
  }
  if (!split_dim_and_size) {
    *new_dims = dims;
    *new_perm = perm;
    std::stable_sort(new_perm->end() - grouped_dims, new_perm->end());
    return true;
  }
  new_dims->assign(dims.size() + 1, 0);
  new_perm->assign(perm.size() + 1, 0);
  const int split_i = split_dim_and_size->first;
  for (int i = 0; i < split_i; ++i) (*new_dims)[static_cast<size_t>(i)] = dims[static_cast<size_t>(i)];
  (*new_dims)[static_cast<size_t>(split_i)] = split_dim_and_size->second;
  (*new_dims)[static_cast<size_t>(split_i) + 1] = dims[static_cast<size_t>(split_i)] / split_dim_and_size->second;
  for (size_t i = static_cast<size_t>(split_i) + 2; i < new_perm->size(); ++i) (*new_dims)[i] = dims[i - 1];
  size_t perm_split = 0;
  for (size_t i = 0; i < perm.size(); ++i) {
    const int perm_dim = perm[i];
    (*new_perm)[i] = perm_dim <= split_i ? perm_dim : perm_dim + 1;
    if (perm_dim == split_i) {
      perm_split = i;
      break;
    }
  }
  (*new_perm)[perm_split + 1] = (*new_perm)[perm_split] + 1;
  for (size_t i = perm_split + 2; i < new_perm->size(); ++i) {
    const int perm_dim = perm[i - 1];
    (*new_perm)[i] = perm_dim <= split_i ? perm_dim : perm_dim + 1;
  }
  std::stable_sort(new_perm->end() - grouped_dims, new_perm->end());
  return true;
}

// The outcome of XLA's sharding factories: a keyword form or a tiled form.
struct Sharding {
  std::optional<std::string> keyword;  // "replicated", "manual", "unreduced"
  Tiled tiled;
  std::string ToString() const { return keyword ? "{" + *keyword + "}" : tiled.ToString(); }
};

// HloSharding::PartialTile on an iota tile assignment.
Sharding PartialTile(const IotaTiles& tiles) {
  const int64_t num_elements = Product(tiles.dims);
  if (tiles.dims.size() == 1 || tiles.dims.back() == num_elements) return Sharding{"replicated", {}};
  if (tiles.dims.back() == 1) {
    std::vector<int64_t> dims(tiles.dims.begin(), tiles.dims.end() - 1);
    return Sharding{std::nullopt, Tiled{dims, IotaTiles{dims, tiles.reshape_dims, tiles.perm}}};
  }
  const int64_t group_size = tiles.dims.back();
  Tiled tiled{tiles.dims, std::nullopt};
  tiled.replicate_on_last_tile_dim = true;
  if (tiles.reshape_dims[static_cast<size_t>(tiles.perm.back())] == group_size) {
    tiled.iota = tiles;
    return Sharding{std::nullopt, tiled};
  }
  std::vector<int64_t> new_reshape;
  std::vector<int> new_perm;
  if (GroupMinorIotaDimsSorted(tiles.reshape_dims, tiles.perm, group_size, &new_reshape, &new_perm)) {
    tiled.iota = IotaTiles::Create(tiles.dims, new_reshape, new_perm);
    return Sharding{std::nullopt, tiled};
  }
  // V1 fallback: the explicit device list, each replication group sorted.
  tiled.devices = tiles.Devices();
  for (auto it = tiled.devices.begin(); it != tiled.devices.end(); it += group_size) std::sort(it, it + group_size);
  return Sharding{std::nullopt, tiled};
}

}  // namespace

std::string HloShardingText(const AtomicAxesSharding& sharding) {
  const std::vector<int64_t>& sizes = sharding.axis_sizes;
  std::vector<bool> used(sizes.size(), false);
  std::vector<int64_t> dims;
  std::vector<int> perm;
  for (const std::vector<int>& axes : sharding.dim_axes) {
    int64_t tiles = 1;
    for (int axis : axes) {
      EP_CHECK(axis >= 0 && static_cast<size_t>(axis) < sizes.size() && !used[static_cast<size_t>(axis)],
               "axis index " + std::to_string(axis) + " is out of range or used twice");
      used[static_cast<size_t>(axis)] = true;
      tiles *= sizes[static_cast<size_t>(axis)];
      perm.push_back(axis);
    }
    dims.push_back(tiles);
  }
  // Unused axes, grouped by type; JAX orders the groups by OpSharding type value.
  std::vector<SubgroupType> type_of(sizes.size(), SubgroupType::kReplicated);
  for (int axis : sharding.manual_axes) type_of[static_cast<size_t>(axis)] = SubgroupType::kManual;
  for (int axis : sharding.unreduced_axes) type_of[static_cast<size_t>(axis)] = SubgroupType::kUnreduced;
  struct Group {
    SubgroupType type;
    std::vector<int> axes;
  };
  std::vector<Group> groups;
  for (SubgroupType type : {SubgroupType::kReplicated, SubgroupType::kManual, SubgroupType::kUnreduced}) {
    Group group{type, {}};
    for (size_t k = 0; k < sizes.size(); ++k) {
      if (!used[k] && type_of[k] == type) group.axes.push_back(static_cast<int>(k));
    }
    if (!group.axes.empty()) groups.push_back(std::move(group));
  }
  const bool any_used = std::find(used.begin(), used.end(), true) != used.end();
  bool only_replicated = true;
  for (const Group& group : groups) only_replicated &= group.type == SubgroupType::kReplicated;
  if (!any_used && only_replicated) return "{replicated}";
  if (groups.empty()) return Tiled{dims, IotaTiles::Create(dims, sizes, perm)}.ToString();

  // HloSharding::Subgroup. One type and no tiling of the data dims: a keyword sharding.
  const int64_t data_tiles = Product(dims);
  if (groups.size() == 1 && data_tiles == 1) return "{" + std::string(SubgroupName(groups[0].type)) + "}";
  // Several types are merged and reordered MANUAL, UNREDUCED, REPLICATED; reordering the groups of
  // the iota before canonicalising is the transposition XLA applies.
  auto rank_of = [](SubgroupType type) {
    return type == SubgroupType::kManual ? 0 : type == SubgroupType::kUnreduced ? 1 : 2;
  };
  std::stable_sort(groups.begin(), groups.end(),
                   [&](const Group& a, const Group& b) { return rank_of(a.type) < rank_of(b.type); });
  std::vector<SubgroupType> types;
  for (const Group& group : groups) {
    int64_t size = 1;
    for (int axis : group.axes) {
      size *= sizes[static_cast<size_t>(axis)];
      perm.push_back(axis);
    }
    dims.push_back(size);
    types.push_back(group.type);
  }
  const IotaTiles tiles = IotaTiles::Create(dims, sizes, perm);
  if (types.size() == 1 && types[0] == SubgroupType::kReplicated) return PartialTile(tiles).ToString();
  if (types.size() == 1 && types[0] == SubgroupType::kManual && Product(dims) == dims.back()) return "{manual}";
  if (types.back() == SubgroupType::kReplicated) {
    Sharding partial = PartialTile(tiles);
    if (partial.keyword) return partial.ToString();
    partial.tiled.replicate_on_last_tile_dim = false;
    partial.tiled.subgroup_types = types;
    return partial.ToString();
  }
  Tiled tiled{dims, tiles};
  tiled.subgroup_types = types;
  return tiled.ToString();
}

std::string HloShardingText(const Mesh& mesh, const PartitionSpec& spec, int rank,
                            const std::vector<std::string>& manual_axes,
                            const std::vector<std::string>& unreduced_axes) {
  EP_CHECK(spec.size() <= rank, "spec " + spec.ToString() + " is longer than rank " + std::to_string(rank));
  // Size-1 mesh axes are dropped before lowering (get_non_one_sized_mesh_spec).
  AtomicAxesSharding sharding;
  std::vector<int> atomic_of(mesh.shape.size(), -1);
  for (size_t k = 0; k < mesh.shape.size(); ++k) {
    if (mesh.shape[k] == 1) continue;
    atomic_of[k] = static_cast<int>(sharding.axis_sizes.size());
    sharding.axis_sizes.push_back(mesh.shape[k]);
  }
  auto atomic = [&](const std::string& name) -> int {
    std::optional<int> k = mesh.AxisIndex(name);
    EP_CHECK(k.has_value(), "'" + name + "' is not an axis of the mesh " + mesh.ToString());
    return atomic_of[static_cast<size_t>(*k)];
  };
  sharding.dim_axes.resize(static_cast<size_t>(rank));
  for (int d = 0; d < spec.size(); ++d) {
    for (const std::string& name : spec[d]) {
      if (int a = atomic(name); a >= 0) sharding.dim_axes[static_cast<size_t>(d)].push_back(a);
    }
  }
  for (const std::string& name : manual_axes) {
    if (int a = atomic(name); a >= 0) sharding.manual_axes.push_back(a);
  }
  for (const std::string& name : unreduced_axes) {
    if (int a = atomic(name); a >= 0) sharding.unreduced_axes.push_back(a);
  }
  return HloShardingText(sharding);
}

std::string IotaTileAssignmentText(const std::vector<int64_t>& dims, const std::vector<int64_t>& reshape_dims,
                                   const std::vector<int>& perm) {
  EP_CHECK(Product(dims) == Product(reshape_dims) && perm.size() == reshape_dims.size(),
           "iota tile assignment dims do not match");
  std::string text = Tiled{dims, IotaTiles::Create(dims, reshape_dims, perm)}.ToString();
  return text.substr(1, text.size() - 2);  // without the HloSharding braces
}

std::vector<int64_t> IotaTileAssignmentDevices(const std::vector<int64_t>& reshape_dims, const std::vector<int>& perm) {
  return IotaTiles{reshape_dims, reshape_dims, perm}.Devices();
}

std::string ExplicitTileAssignmentText(const std::vector<int64_t>& dims, const std::vector<int64_t>& devices) {
  Tiled tiled{dims, std::nullopt};
  tiled.devices = devices;
  std::string text = tiled.ToString();
  return text.substr(1, text.size() - 2);
}

std::string HloTupleText(const std::vector<std::string>& elements) {
  std::string text = "{";
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i > 0) text += i % 5 == 0 ? ", /*index=" + std::to_string(i) + "*/" : ", ";
    text += elements[i];
  }
  return text + "}";
}

std::string XlaHloExport(const Plan& plan, const ParamTree& tree, bool json) {
  std::vector<std::pair<std::string, std::string>> rows;
  rows.reserve(plan.params.size());
  for (const ParamPlan& param : plan.params) {
    const TensorEntry& tensor = tree.tensors[static_cast<size_t>(param.tensor)];
    rows.emplace_back(tensor.name, HloShardingText(plan.mesh, param.effective, tensor.shape.rank()));
  }
  Json mesh = Json::object();
  mesh["axis_names"] = Json(plan.mesh.axis_names);
  mesh["shape"] = Json(plan.mesh.shape);
  return ShardingListText(json, mesh, "", rows);
}

}  // namespace easyplan::planner
