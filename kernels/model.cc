#include "kernels/model.h"

#include "kernels/forward_pass.h"

namespace easyplan::kernels {

std::vector<int> EntryAxes(const Mesh& mesh, const PartitionSpec::Entry& names) {
  return ActivationSpec(mesh, {names}).dims[0];
}

int64_t EntryTiles(const Mesh& mesh, const PartitionSpec::Entry& names) {
  int64_t tiles = 1;
  for (int axis : EntryAxes(mesh, names)) tiles *= mesh.shape[static_cast<size_t>(axis)];
  return tiles;
}

DistSpec ActivationSpec(const Mesh& mesh, const std::vector<PartitionSpec::Entry>& entries) {
  DistSpec spec = ReplicatedSpec(static_cast<int>(entries.size()));
  std::vector<bool> used(mesh.shape.size(), false);
  for (size_t d = 0; d < entries.size(); ++d) {
    for (const std::string& name : entries[d]) {
      std::optional<int> axis = mesh.AxisIndex(name);
      if (!axis || used[static_cast<size_t>(*axis)]) continue;
      used[static_cast<size_t>(*axis)] = true;
      spec.dims[d].push_back(*axis);
    }
  }
  return spec;
}

std::vector<Activation> Forward(const ModelDesc& model, Spmd& spmd, const ParamLookup& param, const DistTensor& ids) {
  internal::ForwardPass pass(model, spmd, param);
  return pass.Run(ids);
}

}  // namespace easyplan::kernels
