// check's text (CheckText) passes every figure through the non-finite guard (core/human.h), as its JSON
// passes EmitJson's (issue 36: no output prints inf or NaN).
#include "api/check_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "api/command_table.h"
#include "core/human.h"
#include "tests/test_util.h"

namespace easyplan::api {
namespace {

TEST(CheckTextTest, NonFiniteComparisonIsAnInternalErrorNotNan) {
  auto model =
      Model::Load(Environment::Real(), ConfigSource::Path(testing::SourceDir() + "/examples/llama-3.1-8b"), {});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  CommandOptions options = DefaultOptions("check");
  options.plan.mesh.axes = "fsdp=2";
  auto run = Check(*model, options.Check());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(run->numeric && !run->numeric->comparisons.empty());
  run->numeric->comparisons[0].nmse = std::nan("");
  const std::string name = run->numeric->comparisons[0].name;
  try {
    const std::string text = CheckText(*run);
    ADD_FAILURE() << "a NaN nmse was printed:\n" << text;
  } catch (const NonFiniteFigure& e) {
    EXPECT_NE(std::string(e.what()).find("the check's " + name + " nmse is NaN"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace easyplan::api
