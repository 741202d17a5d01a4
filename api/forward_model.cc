#include "api/forward_model.h"

#include <fmt/format.h>

#include "kernels/tiny_model.h"
#include "schemas/easydel_version.h"
#include "schemas/model_dims.h"

namespace easyplan::api {

StatusOr<const schemas::NumericCheckSpec*> ForwardPassOf(const Model& model, const std::string& what,
                                                         const std::string& instead) {
  const std::string model_type = model.model_type();
  EP_ASSIGN_OR_RETURN(const schemas::NumericCheckDecl* decl, model.NumericCheck(model_type));
  if (decl != nullptr && decl->missing.empty()) {
    return model.ForwardSpec(*decl);
  }
  if (decl != nullptr) {
    return Status::BadInput(
        {}, what + " has no reference forward pass for model_type '" + model_type + "': " + decl->missing,
        {"its family file's numeric_check names the trait the forward structures lack (docs/SCHEMAS.md, \"Forward "
         "structures\"); " +
         instead});
  }
  std::vector<std::string> covered;
  for (const std::string& name : model.FamilyNames()) {
    EP_ASSIGN_OR_RETURN(const schemas::NumericCheckDecl* listed, model.NumericCheck(name));
    if (listed != nullptr && listed->missing.empty()) covered.push_back(name);
  }
  return Status::BadInput({}, what + " has no reference forward pass for model_type '" + model_type + "'",
                          {fmt::format("covered: {}; {}", fmt::join(covered, ", "), instead)});
}

StatusOr<kernels::ModelDesc> FullModelDesc(const Model& model, const ParamTree& tree, const planner::Plan& plan,
                                           int64_t batch, int64_t seq) {
  EP_ASSIGN_OR_RETURN(const schemas::NumericCheckSpec* spec,
                      ForwardPassOf(model, "the step-time model", "cost and suggest need one"));
  const kernels::TinyModel full = kernels::FullSizeModel(*spec);
  EP_ASSIGN_OR_RETURN(const schemas::ModelDims dims, schemas::ModelDimsOf(model.resolved()));
  kernels::ModelDesc desc = kernels::ModelDescOf(full, dims, tree, plan);
  desc.batch = batch;
  desc.seq = seq;
  return desc;
}

}  // namespace easyplan::api
