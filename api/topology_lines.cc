#include "api/topology_lines.h"

#include <fmt/format.h>

#include "step/torus.h"

namespace easyplan::api {

std::vector<std::string> TopologyLines(const step::SliceTopology& slice, const Mesh& mesh,
                                       const step::HardwareProfile& hardware) {
  const step::TorusSlice& torus = slice.torus;
  std::vector<std::string> wrapped;
  for (size_t p = 0; p < torus.dims.size(); ++p) {
    if (torus.wraps[p]) wrapped.push_back(std::to_string(torus.dims[p]));
  }
  const std::string wraps = wrapped.empty() ? "no wraparound"
                            : wrapped.size() == torus.dims.size()
                                ? "wraparound on every dim"
                                : "wraparound on its " + fmt::format("{}", fmt::join(wrapped, ", ")) + " dim" +
                                      (wrapped.size() > 1 ? "s" : "");
  const std::string where = torus.shape_given ? "as given"
                            : torus.shape_assumed
                                ? "no Cloud TPU topology has that chip count: the most even fit of the pod's torus"
                                : "Cloud TPU's topology for that chip count";
  std::vector<std::string> lines = {fmt::format("the {} slice of {} chips is a {} torus ({}), with {}", hardware.name,
                                                slice.chips, step::DimsText(torus.dims), where, wraps)};
  std::vector<std::string> parts;
  for (size_t l = 0; l < slice.ici.size(); ++l) {
    if (slice.ici[l] <= 1) continue;
    std::vector<int64_t> along;
    for (size_t p = 0; p < torus.dims.size(); ++p) {
      if (torus.assignment[p][l] > 1) along.push_back(torus.assignment[p][l]);
    }
    parts.push_back(fmt::format("{}={} over {}", mesh.axis_names[l], slice.ici[l], step::DimsText(along)));
  }
  if (parts.empty()) return lines;
  if (torus.ring_order) {
    lines.push_back(fmt::format("the mesh in jax mesh_utils' ring order over the slice (one ring of ICI links): {}",
                                fmt::join(parts, ", ")));
  } else if (torus.layout_assumed) {
    lines.push_back(
        fmt::format("the mesh on the torus row-major, without wraparound (no layout of jax mesh_utils "
                    "fits these axis sizes): {}",
                    fmt::join(parts, ", ")));
  } else {
    lines.push_back(fmt::format("the mesh laid on the torus as jax mesh_utils.create_device_mesh lays it: {}",
                                fmt::join(parts, ", ")));
  }
  return lines;
}

}  // namespace easyplan::api
