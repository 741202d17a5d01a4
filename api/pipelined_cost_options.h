#ifndef EASYPLAN_API_PIPELINED_COST_OPTIONS_H_
#define EASYPLAN_API_PIPELINED_COST_OPTIONS_H_

// api tests: the options of a pipelined training step on H100s, two sequences of 2,048 tokens per
// microbatch (docs/PIPELINE.md), shared by the pipelined cost and timeline tests.

#include <cstdint>
#include <string>

#include "api/cost.h"

namespace easyplan::api {

inline CostOptions PipelinedCostOptions(const std::string& mesh, int64_t microbatches,
                                        const std::string& schedule = "1f1b", int64_t virtual_stages = 1,
                                        const std::string& layers = "") {
  CostOptions options;
  options.plan.mesh.axes = mesh;
  options.plan.pipeline.schedule = schedule;
  options.plan.pipeline.virtual_stages = virtual_stages;
  options.plan.pipeline.layers = layers;
  options.plan.pipeline.supported = true;
  options.memory.mode = "train";
  options.memory.batch = 2 * microbatches;
  options.memory.seq = 2048;
  options.memory.hardware = "h100-sxm";
  options.pricing.microbatches = microbatches;
  return options;
}

}  // namespace easyplan::api

#endif  // EASYPLAN_API_PIPELINED_COST_OPTIONS_H_
