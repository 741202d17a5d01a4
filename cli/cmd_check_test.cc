// check's text (RenderCheck) passes every figure through the non-finite guard (core/human.h), as its
// JSON passes EmitJson's (issue 36: no output prints inf or NaN).
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>

#include "api/check.h"
#include "api/command_table.h"
#include "cli/commands.h"
#include "core/file_system.h"
#include "core/human.h"
#include "tests/test_util.h"

namespace easyplan::cli {
namespace {

TEST(CheckTextTest, NonFiniteComparisonIsAnInternalErrorNotNan) {
  auto model = api::Model::Load(api::Environment::Real(),
                                api::ConfigSource::Path(testing::SourceDir() + "/examples/llama-3.1-8b"), {});
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  api::CommandOptions options = api::DefaultOptions("check");
  options.plan.mesh.axes = "fsdp=2";
  auto run = api::Check(*model, options.Check());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(run->numeric && !run->numeric->comparisons.empty());
  run->numeric->comparisons[0].nmse = std::nan("");
  const std::string name = run->numeric->comparisons[0].name;
  api::CommandResult result{.outcome = api::Outcome::kFindings, .model = *model, .value = std::move(*run)};

  MemFileSystem fs;
  std::istringstream in;
  std::ostringstream out, err;
  Context ctx{fs, in, out, err, ""};
  try {
    (void)RenderCheck(result, options, ctx);
    ADD_FAILURE() << "a NaN nmse was printed:\n" << out.str();
  } catch (const NonFiniteFigure& e) {
    EXPECT_NE(std::string(e.what()).find("the check's " + name + " nmse is NaN"), std::string::npos) << e.what();
  }
  EXPECT_EQ(out.str().find("nan"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace easyplan::cli
