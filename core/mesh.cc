#include "core/mesh.h"

#include <fmt/format.h>

#include <algorithm>

namespace easyplan {

int64_t Mesh::NumDevices() const {
  int64_t total = 1;
  for (int64_t size : shape) total *= size;
  return total;
}

std::optional<int> Mesh::AxisIndex(const std::string& name) const {
  for (size_t i = 0; i < axis_names.size(); ++i) {
    if (axis_names[i] == name) return static_cast<int>(i);
  }
  return std::nullopt;
}

std::vector<int64_t> Mesh::Coordinates(int64_t device) const {
  std::vector<int64_t> coords(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    coords[k] = device % shape[k];
    device /= shape[k];
  }
  return coords;
}

int64_t Mesh::SliceIndex(int64_t device) const {
  if (dcn_shape.empty()) return 0;
  std::vector<int64_t> coords = Coordinates(device);
  int64_t slice = 0;
  for (size_t k = 0; k < shape.size(); ++k) {
    int64_t ici = shape[k] / dcn_shape[k];
    slice = slice * dcn_shape[k] + coords[k] / ici;
  }
  return slice;
}

int64_t Mesh::Stride(int axis) const {
  int64_t stride = 1;
  for (size_t k = static_cast<size_t>(axis) + 1; k < shape.size(); ++k) stride *= shape[k];
  return stride;
}

std::vector<int64_t> Mesh::SliceShape() const {
  std::vector<int64_t> ici = shape;
  if (dcn_shape.empty()) return ici;
  for (size_t k = 0; k < ici.size(); ++k) ici[k] /= std::max<int64_t>(1, dcn_shape[k]);
  return ici;
}

std::vector<int64_t> Mesh::SliceStrides() const {
  const std::vector<int64_t> ici = SliceShape();
  std::vector<int64_t> stride(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) stride[k - 1] = stride[k] * ici[k];
  return stride;
}

std::string Mesh::ToString() const {
  std::vector<std::string> parts;
  for (size_t k = 0; k < shape.size(); ++k) parts.push_back(fmt::format("{}={}", axis_names[k], shape[k]));
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace easyplan
