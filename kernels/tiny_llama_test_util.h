#ifndef EASYPLAN_KERNELS_TINY_LLAMA_TEST_UTIL_H_
#define EASYPLAN_KERNELS_TINY_LLAMA_TEST_UTIL_H_

// A tiny llama (ModelDesc, its EasyDeL tree and a plan of it on any mesh) for the kernels' tests.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/json.h"
#include "core/param_tree.h"
#include "kernels/model.h"
#include "planner/plan.h"
#include "rules/rule_library.h"
#include "schemas/data_source.h"
#include "schemas/forward_structure.h"
#include "tests/test_util.h"

namespace easyplan::kernels {

/// EasyDeL's five mesh axes, in order.
inline const std::vector<std::string> kEasyDelAxes = {"dp", "fsdp", "ep", "tp", "sp"};

inline Json TestConfig() {
  Json config = Json::object();
  config["use_expert_tensor_mode"] = false;
  config["fsdp_is_ep_bound"] = true;
  config["sp_is_ep_bound"] = true;
  config["partition_axis"] = testing::DefaultPartitionAxis();
  return config;
}

/// The llama structure of schemas/forwards.yaml.
inline schemas::ForwardStructure LlamaStructure() {
  auto forwards = schemas::DataSource::Embedded().ReadDocument("schemas/forwards.yaml");
  EXPECT_TRUE(forwards.ok());
  auto structure = schemas::NamedForwardStructure(*forwards, "llama", {});
  EXPECT_TRUE(structure.ok());
  return *structure;
}

inline ModelDesc TinyLlama() {
  ModelDesc m;
  m.forward = LlamaStructure();
  m.attention_norm = "input_layernorm";
  m.mlp_norm = "post_attention_layernorm";
  m.model_type = "llama";
  m.vocab = 64;
  m.hidden = 32;
  m.layers = 2;
  m.heads = 8;
  m.kv_heads = 4;
  m.head_dim = 8;
  m.intermediate = 64;
  m.axes.batch = {"fsdp", "dp"};
  m.axes.sequence = {"sp"};
  m.axes.hidden_state = {"tp"};
  m.axes.head = {"tp"};
  m.batch = 4;
  m.seq = 8;
  return m;
}

inline ParamTree LlamaTree(const ModelDesc& m) {
  ParamTree tree;
  tree.model_type = "llama";
  auto add = [&](std::string name, Shape shape) { tree.tensors.push_back(TensorEntry{std::move(name), shape}); };
  add("model/embed_tokens/embedding", Shape{m.vocab, m.hidden});
  for (int64_t l = 0; l < m.layers; ++l) {
    const std::string p = "model/layers/" + std::to_string(l) + "/";
    add(p + "self_attn/q_proj/kernel", Shape{m.hidden, m.heads * m.head_dim});
    add(p + "self_attn/k_proj/kernel", Shape{m.hidden, m.kv_heads * m.head_dim});
    add(p + "self_attn/v_proj/kernel", Shape{m.hidden, m.kv_heads * m.head_dim});
    add(p + "self_attn/o_proj/kernel", Shape{m.heads * m.head_dim, m.hidden});
    add(p + "mlp/gate_proj/kernel", Shape{m.hidden, m.intermediate});
    add(p + "mlp/up_proj/kernel", Shape{m.hidden, m.intermediate});
    add(p + "mlp/down_proj/kernel", Shape{m.intermediate, m.hidden});
    add(p + "input_layernorm/kernel", Shape{m.hidden});
    add(p + "post_attention_layernorm/kernel", Shape{m.hidden});
  }
  add("model/norm/kernel", Shape{m.hidden});
  add("lm_head/kernel", Shape{m.hidden, m.vocab});
  return tree;
}

/// The built-in llama rules on `tree` over the mesh `names` x `sizes`.
inline planner::Plan PlanTinyLlama(const ParamTree& tree, std::vector<std::string> names, std::vector<int64_t> sizes) {
  rules::RuleLibrary library(schemas::DataSource::Embedded());
  const Json config = TestConfig();
  auto rules = library.ForModelType("llama");
  EXPECT_TRUE(rules.ok());
  planner::PlanRequest request;
  request.tree = &tree;
  request.rules = *rules;
  request.presets = *library.GetPresets();
  request.config = &config;
  request.mesh.axis_names = std::move(names);
  request.mesh.shape = std::move(sizes);
  auto plan = planner::BuildPlan(request);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return std::move(*plan);
}

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_TINY_LLAMA_TEST_UTIL_H_
