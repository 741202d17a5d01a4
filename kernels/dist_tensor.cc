#include "kernels/dist_tensor.h"

#include <fmt/format.h>

#include <algorithm>

namespace easyplan::kernels {

bool DistSpec::Uses(int axis) const {
  for (const std::vector<int>& entry : dims) {
    if (std::find(entry.begin(), entry.end(), axis) != entry.end()) return true;
  }
  return false;
}

std::string DistSpec::ToString(const Mesh& mesh) const {
  std::vector<PartitionSpec::Entry> entries;
  for (const std::vector<int>& entry : dims) {
    PartitionSpec::Entry names;
    for (int a : entry) names.push_back(mesh.axis_names[static_cast<size_t>(a)]);
    entries.push_back(names);
  }
  std::string text = PartitionSpec(entries).ToString();
  if (!partial.empty()) {
    std::vector<std::string> names;
    for (int a : partial) names.push_back(mesh.axis_names[static_cast<size_t>(a)]);
    text += fmt::format(" partial{{{}}}", fmt::join(names, ","));
  }
  return text;
}

DistSpec ReplicatedSpec(int rank) {
  DistSpec spec;
  spec.dims.resize(static_cast<size_t>(rank));
  return spec;
}

StatusOr<DistSpec> SpecFromPartition(const PartitionSpec& spec, int rank, const Mesh& mesh) {
  if (spec.size() > rank) {
    return Status::BadInput({}, fmt::format("{} has more entries than the rank {}", spec.ToString(), rank));
  }
  DistSpec out = ReplicatedSpec(rank);
  std::vector<bool> used(mesh.shape.size(), false);
  for (int d = 0; d < spec.size(); ++d) {
    for (const std::string& name : spec[d]) {
      std::optional<int> axis = mesh.AxisIndex(name);
      if (!axis) return Status::BadInput({}, "unknown mesh axis '" + name + "' in " + spec.ToString());
      if (used[static_cast<size_t>(*axis)])
        return Status::BadInput({}, "axis '" + name + "' repeats in " + spec.ToString());
      used[static_cast<size_t>(*axis)] = true;
      out.dims[static_cast<size_t>(d)].push_back(*axis);
    }
  }
  return out;
}

MeshGeometry::MeshGeometry(const Mesh& mesh) : mesh_(mesh) {
  strides_.assign(mesh.shape.size(), 1);
  for (size_t k = mesh.shape.size(); k-- > 0;) {
    strides_[k] = devices_;
    devices_ *= mesh.shape[k];
  }
  local_devices_ = devices_;
}

MeshGeometry::MeshGeometry(const Mesh& mesh, int64_t first, int64_t count) : MeshGeometry(mesh) {
  EP_CHECK(first >= 0 && count >= 1 && first + count <= devices_, "local device range outside the mesh");
  first_local_ = first;
  local_devices_ = count;
}

int64_t MeshGeometry::Tiles(const std::vector<int>& axes) const {
  int64_t tiles = 1;
  for (int a : axes) tiles *= AxisSize(a);
  return tiles;
}

int64_t MeshGeometry::BlockIndex(int64_t device, const std::vector<int>& axes) const {
  int64_t block = 0;
  for (int a : axes) block = block * AxisSize(a) + Coord(device, a);
  return block;
}

Range MeshGeometry::DimRange(int64_t device, int64_t size, const std::vector<int>& axes) const {
  const int64_t length = size / Tiles(axes);
  const int64_t block = BlockIndex(device, axes);
  return {block * length, block * length + length};
}

std::vector<std::vector<int64_t>> MeshGeometry::Groups(const std::vector<int>& axes) const {
  // One pass: a device's group is the mixed-radix number of its coordinates on the other axes, and
  // groups are numbered in the order their first (smallest) member appears.
  std::vector<int> others;
  for (int a = 0; a < mesh_.rank(); ++a) {
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) others.push_back(a);
  }
  const int64_t size = Tiles(axes);
  std::vector<int64_t> slot(static_cast<size_t>(devices_ / size), -1);
  std::vector<std::vector<int64_t>> groups;
  groups.reserve(slot.size());
  for (int64_t d = 0; d < devices_; ++d) {
    const size_t key = static_cast<size_t>(BlockIndex(d, others));
    if (slot[key] < 0) {
      slot[key] = static_cast<int64_t>(groups.size());
      groups.emplace_back(static_cast<size_t>(size), -1);
    }
    groups[static_cast<size_t>(slot[key])][static_cast<size_t>(BlockIndex(d, axes))] = d;
  }
  return groups;
}

std::vector<Range> DistTensor::BoxOf(const MeshGeometry& geo, int64_t device) const {
  std::vector<Range> box;
  for (size_t k = 0; k < shape.size(); ++k) box.push_back(geo.DimRange(device, shape[k], spec.dims[k]));
  return box;
}

bool EvenlyDivisible(const Dims& shape, const DistSpec& spec, const MeshGeometry& geo) {
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] % geo.Tiles(spec.dims[k]) != 0) return false;
  }
  return true;
}

DistTensor Distribute(const HostTensor& full, const DistSpec& spec, const MeshGeometry& geo) {
  EP_CHECK(EvenlyDivisible(full.shape, spec, geo), "Distribute: uneven layout");
  DistTensor t{full.shape, spec, {}};
  t.local.reserve(static_cast<size_t>(geo.local_devices()));
  for (size_t i = 0; i < static_cast<size_t>(geo.local_devices()); ++i) {
    t.local.push_back(SliceBox(full, t.BoxOf(geo, geo.LocalDevice(i))));
  }
  return t;
}

HostTensor Assemble(const DistTensor& t, const MeshGeometry& geo) {
  EP_CHECK(t.spec.partial.empty(), "Assemble of a partial tensor");
  EP_CHECK(geo.whole(), "Assemble needs every device's block");
  HostTensor full(t.shape);
  std::vector<int> named;
  for (const std::vector<int>& entry : t.spec.dims) named.insert(named.end(), entry.begin(), entry.end());
  for (int64_t d = 0; d < geo.devices(); ++d) {
    bool replica0 = true;
    for (int a = 0; a < geo.mesh().rank(); ++a) {
      if (std::find(named.begin(), named.end(), a) == named.end() && geo.Coord(d, a) != 0) replica0 = false;
    }
    if (!replica0) continue;
    Dims starts;
    for (const Range& r : t.BoxOf(geo, d)) starts.push_back(r.first);
    PasteBox(&full, starts, t.local[static_cast<size_t>(d)]);
  }
  return full;
}

}  // namespace easyplan::kernels
