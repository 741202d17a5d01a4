#include "planner/pipeline_stages.h"

#include <charconv>

namespace easyplan::planner {

std::optional<int64_t> LayerIndexOf(std::string_view name) {
  size_t start = 0;
  while (start < name.size()) {
    size_t end = name.find_first_of("/.", start);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view segment = name.substr(start, end - start);
    if (!segment.empty() && segment.find_first_not_of("0123456789") == std::string_view::npos) {
      int64_t value = 0;
      const auto [ptr, error] = std::from_chars(segment.data(), segment.data() + segment.size(), value);
      if (error == std::errc() && ptr == segment.data() + segment.size()) return value;
    }
    start = end + 1;
  }
  return std::nullopt;
}

std::vector<StagePlacement> PlaceOnStages(const ParamTree& tree, const PipelineSplit& split,
                                          const std::vector<OuterTensor>& outer) {
  std::vector<int64_t> layer_of(tree.tensors.size(), -1);
  for (size_t t = 0; t < tree.tensors.size(); ++t) layer_of[t] = LayerIndexOf(tree.tensors[t].name).value_or(-1);
  return PlaceOnStages(layer_of, split, outer);
}

std::vector<StagePlacement> PlaceOnStages(const std::vector<int64_t>& layer_of, const PipelineSplit& split,
                                          const std::vector<OuterTensor>& outer) {
  std::vector<StagePlacement> out(layer_of.size());
  if (!split.pipelined()) return out;
  const int64_t last = split.stages - 1;
  for (size_t t = 0; t < layer_of.size(); ++t) {
    if (layer_of[t] >= 0) {
      out[t].stage = split.StageOfLayer(layer_of[t]);
      continue;
    }
    switch (t < outer.size() ? outer[t] : OuterTensor::kLast) {
      case OuterTensor::kFirst:
        out[t].stage = 0;
        break;
      case OuterTensor::kFirstAndLast:
        out[t].stage = 0;
        out[t].also = last;
        break;
      case OuterTensor::kLast:
        out[t].stage = last;
        break;
    }
  }
  if (split.schedule == PipelineSchedule::kDualPipe) {
    // DualPipe feeds microbatches from both ends: the device of stage s also runs stage p-1-s of the
    // reverse direction, so every stage's tensors have a second home (its "parameter 2x").
    for (StagePlacement& p : out) {
      const int64_t mirror = last - p.stage;
      if (p.also < 0 && mirror != p.stage) p.also = mirror;
    }
  }
  return out;
}

}  // namespace easyplan::planner
