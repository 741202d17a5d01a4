#include "kernels/stage_mesh.h"

#include "core/status.h"

namespace easyplan::kernels {

Mesh StageMesh(const Mesh& mesh, int pp_axis) {
  EP_CHECK(pp_axis >= 0 && pp_axis < mesh.rank(), "the pp axis is one of the mesh's");
  Mesh stage = mesh;
  const auto at = static_cast<std::ptrdiff_t>(pp_axis);
  stage.axis_names.erase(stage.axis_names.begin() + at);
  stage.shape.erase(stage.shape.begin() + at);
  if (!stage.dcn_shape.empty()) stage.dcn_shape.erase(stage.dcn_shape.begin() + at);
  return stage;
}

int64_t DeviceOfStage(const Mesh& mesh, int pp_axis, int64_t stage, int64_t device) {
  const int64_t stride = mesh.Stride(pp_axis);
  const int64_t stages = mesh.shape[static_cast<size_t>(pp_axis)];
  return device / stride * stages * stride + stage * stride + device % stride;
}

StageRange StageDevicesIn(const Mesh& mesh, int pp_axis, int64_t stage, int64_t first, int64_t count) {
  const int64_t stride = mesh.Stride(pp_axis);
  const int64_t stages = mesh.shape[static_cast<size_t>(pp_axis)];
  StageRange range;
  for (int64_t d = first; d < first + count; ++d) {
    if (d / stride % stages != stage) continue;
    const int64_t id = d / (stages * stride) * stride + d % stride;
    if (range.count == 0) range.first = id;
    EP_CHECK(id == range.first + range.count, "a process's devices of a pipeline stage are contiguous in the stage");
    ++range.count;
  }
  return range;
}

Dims BlockShape(const Dims& shape, const DistSpec& spec, const MeshGeometry& geo) {
  Dims block = shape;
  for (size_t k = 0; k < block.size(); ++k) {
    const int64_t tiles = geo.Tiles(spec.dims[k]);
    EP_CHECK(block[k] % tiles == 0, "an even layout");
    block[k] /= tiles;
  }
  return block;
}

}  // namespace easyplan::kernels
