#ifndef EASYPLAN_API_SAMPLE_TREE_TEST_UTIL_H_
#define EASYPLAN_API_SAMPLE_TREE_TEST_UTIL_H_

// The three-tensor tree the tree renderers' tests share (api/tree_text_test.cc, api/tree_document_test.cc):
// a parameter, a buffer that is not counted as one, and a scalar parameter.

#include "core/param_tree.h"

namespace easyplan::api {

inline ParamTree SampleTree() {
  ParamTree tree;
  tree.model_type = "llama";
  tree.layout = Layout::kHf;
  tree.tensors = {{"model.embed_tokens.weight", Shape{128, 64}, DType::kBFloat16, TensorRole::kParameter},
                  {"model.layers.0.self_attn.rotary_emb.inv_freq", Shape{16}, DType::kFloat32, TensorRole::kBuffer},
                  {"step", Shape{}, DType::kInt32, TensorRole::kParameter}};
  return tree;
}

}  // namespace easyplan::api

#endif  // EASYPLAN_API_SAMPLE_TREE_TEST_UTIL_H_
