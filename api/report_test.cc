#include "api/report.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>

#include "api/cost.h"
#include "api/memory_pipeline.h"
#include "api/pipeline_timeline.h"
#include "api/plan_pipeline.h"
#include "api/test_models.h"
#include "core/human.h"
#include "tests/test_util.h"

namespace easyplan::api {
namespace {

// The page's script expands a tensor row as this does: the template's '#'s take the row's numbers in turn.
std::map<std::string, int64_t> ExpandTensors(const Json& tensors) {
  std::map<std::string, int64_t> out;
  for (const Json& row : tensors["rows"]) {
    const std::string& text = tensors["templates"][row[0].get<size_t>()].get_ref<const std::string&>();
    const int64_t group = row[1].get<int64_t>(), count = row[3].get<int64_t>();
    const size_t holes = static_cast<size_t>(std::count(text.begin(), text.end(), '#'));
    for (int64_t i = 0; i < count; ++i) {
      std::string name;
      size_t k = 0;
      for (char c : text) {
        if (c != '#') {
          name += c;
          continue;
        }
        name += std::to_string(row[4 + static_cast<size_t>(i) * holes + k++].get<int64_t>());
      }
      out[name] = group;
    }
  }
  return out;
}

TEST(ReportTest, TensorRowsExpandToEveryTensorOfThePlanInItsGroup) {
  auto model = LoadExample("qwen3-30b-a3b");
  ReportOptions options;
  options.plan.mesh.axes = "dp=1,fsdp=4,ep=2,tp=1,sp=1";
  auto report = Report(model, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const Json* data = &report->data;
  auto plan = PlanModel(model, options.plan);
  ASSERT_TRUE(plan.ok());
  const std::map<std::string, int64_t> names = ExpandTensors((*data)["tensors"]);
  ASSERT_EQ(names.size(), plan->plan.params.size());
  for (const planner::ParamPlan& p : plan->plan.params) {
    const std::string& name = plan->inputs.tree->tensors[static_cast<size_t>(p.tensor)].name;
    ASSERT_TRUE(names.count(name)) << name;
    EXPECT_EQ(names.at(name), p.group) << name;
  }
  // Groups and devices carry the plan's own figures.
  const Json& groups = (*data)["groups"];
  ASSERT_EQ(groups.size(), plan->plan.groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    EXPECT_EQ(groups[g]["bytes_per_device"].get<int64_t>(), plan->plan.groups[g].MaxShardBytes());
    EXPECT_EQ(groups[g]["tensors"].get<int64_t>(), plan->plan.groups[g].tensors);
  }
  EXPECT_EQ((*data)["devices"]["params"].get<std::vector<int64_t>>(), plan->plan.device_bytes);
  EXPECT_TRUE((*data)["memory"].is_null());
}

TEST(ReportTest, MemoryIsTheMemoryCommandsForTheSameStep) {
  auto model = LoadExample("llama-3.1-8b");
  ReportOptions options;
  options.plan.mesh.axes = "dp=1,fsdp=4,ep=1,tp=2,sp=1";
  MemoryOptions memory;
  memory.mode = "train";
  memory.batch = 8;
  memory.seq = 2048;
  memory.hardware = "h100-sxm";
  options.memory = memory;
  auto report = Report(model, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const Json* data = &report->data;
  auto expected = Memory(model, options.plan, memory);
  ASSERT_TRUE(expected.ok() && expected->report);
  const Json& m = (*data)["memory"];
  EXPECT_EQ(m["worst_device"]["total"].get<int64_t>(), expected->report->Worst().total);
  EXPECT_EQ(m["fits"].get<bool>(), expected->report->fits);
  EXPECT_EQ((*data)["verdict"]["fits"].get<bool>(), expected->report->fits);
  for (size_t d = 0; d < expected->report->devices.size(); ++d) {
    EXPECT_EQ(m["devices"]["activations"][d].get<int64_t>(), expected->report->devices[d].activations);
    EXPECT_EQ(m["devices"]["optimizer"][d].get<int64_t>(), expected->report->devices[d].optimizer);
  }
}

// DeepSeek-V3's HF tree (91,991 tensors) on 8,192 devices: the page stays under 2 MB, and past a few
// thousand devices the per-device arrays give way to the summary.
TEST(ReportTest, DeepSeekV3HfTreeFitsInTwoMegabytes) {
  auto model = LoadExample("deepseek-v3");
  ReportOptions options;
  options.plan.tree.layout = "hf";
  options.plan.rules = testing::SourceDir() + "/rules/deepseek_v3_hf.yaml";
  options.plan.mesh.axes = "dp=1,fsdp=1024,ep=1,tp=8,sp=1";
  auto report = Report(model, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const Json* data = &report->data;
  EXPECT_EQ(ExpandTensors((*data)["tensors"]).size(), 91'991u);
  EXPECT_FALSE((*data)["devices"]["drawn"].get<bool>());
  EXPECT_TRUE((*data)["devices"]["params"].empty());
  const std::string page = ReportPage(*data);
  EXPECT_TRUE(report->data["devices"]["blocks"].is_object());
  EXPECT_LT(page.size(), 2u << 20);
}

// With --hardware, the cost section is `cost`'s estimate of the same step, layer by layer.
TEST(ReportTest, CostIsTheCostCommandsForTheSameStep) {
  auto model = LoadExample("llama-3.1-8b");
  ReportOptions options;
  options.plan.mesh.axes = "dp=1,fsdp=4,ep=1,tp=2,sp=1";
  MemoryOptions memory;
  memory.mode = "train";
  memory.batch = 16;
  memory.seq = 2048;
  memory.hardware = "h100-sxm";
  options.memory = memory;
  options.pricing.microbatches = 2;
  auto report = Report(model, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  CostOptions cost_options;
  cost_options.plan = options.plan;
  cost_options.memory = memory;
  cost_options.pricing.microbatches = 2;
  auto cost = Cost(model, cost_options);
  ASSERT_TRUE(cost.ok() && cost->estimate) << cost.status().ToString();
  const Json& c = report->data["cost"];
  ASSERT_TRUE(c.is_object()) << report->data["cost_note"];
  EXPECT_DOUBLE_EQ(c["step_time_s"].get<double>(), cost->estimate->step.step_time_s);
  EXPECT_DOUBLE_EQ(c["mfu"].get<double>(), cost->estimate->mfu);
  ASSERT_EQ(c["layers"].size(), cost->estimate->step.layers.size());
  ASSERT_FALSE(c["layers"].empty());
  for (size_t i = 0; i < c["layers"].size(); ++i) {
    EXPECT_EQ(c["layers"][i]["scope"], cost->estimate->step.layers[i].scope);
    EXPECT_DOUBLE_EQ(c["layers"][i]["compute_s"].get<double>(), cost->estimate->step.layers[i].compute_s);
    EXPECT_DOUBLE_EQ(c["layers"][i]["communication_s"].get<double>(), cost->estimate->step.layers[i].communication_s);
  }
  // The memory is one microbatch's, as cost and `memory --batch 8` give it.
  EXPECT_EQ(report->data["memory"]["worst_device"]["total"].get<int64_t>(), cost->estimate->memory.Worst().total);
  EXPECT_EQ(report->fits, cost->estimate->fits);
}

TEST(ReportTest, StepWithoutHardwareOrOnTheHfTreeSaysWhyItHasNoCost) {
  auto model = LoadExample("llama-3.1-8b");
  ReportOptions options;
  options.plan.mesh.axes = "dp=1,fsdp=8,ep=1,tp=1,sp=1";
  MemoryOptions memory;
  memory.mode = "prefill";
  memory.batch = 4;
  memory.seq = 1024;
  memory.max_memory = "80GiB";
  options.memory = memory;
  auto report = Report(model, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->data["cost"].is_null());
  EXPECT_NE(report->data["cost_note"].get<std::string>().find("--hardware"), std::string::npos);

  options.memory->max_memory.clear();
  options.memory->hardware = "h100-sxm";
  options.plan.tree.layout = "hf";
  report = Report(model, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->data["cost"].is_null());
  EXPECT_NE(report->data["cost_note"].get<std::string>().find("--layout hf"), std::string::npos);
  EXPECT_TRUE(report->data["memory"].is_object());
}

TEST(ReportTest, PricingOptionsWithoutAStepAreBadInput) {
  auto model = LoadExample("llama-3.1-8b");
  ReportOptions options;
  options.pricing.microbatches = 4;
  auto report = Report(model, options);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().ToString().find("need --mode"), std::string::npos) << report.status().ToString();
}

// suggest --report draws the winner: the page's plan, memory and cost are the winning candidate's, and
// every feasible candidate is a point of the chart.
TEST(ReportTest, SuggestReportDrawsTheWinnersPlanAndEveryCandidate) {
  auto model = LoadExample("llama-3.1-8b");
  SuggestOptions options;
  options.plan.config.devices = 8;
  options.memory.mode = "train";
  options.memory.batch = 32;
  options.memory.seq = 4096;
  options.memory.hardware = "h100-sxm";
  auto result = Suggest(model, options);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  ASSERT_FALSE(result->ranked.empty());
  auto report = SuggestReport(model, options, *result);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const Candidate& winner = result->ranked.front();
  const Json& data = report->data;
  EXPECT_EQ(data["mesh"]["shape"].get<std::vector<int64_t>>(), winner.mesh);
  EXPECT_DOUBLE_EQ(data["cost"]["step_time_s"].get<double>(), winner.estimate.step.step_time_s);
  EXPECT_EQ(data["cost"]["microbatches"].get<int64_t>(), winner.microbatches);
  EXPECT_EQ(data["cost"]["gradient_checkpointing"].get<std::string>(), PolicyFlagValue(winner.policy));
  EXPECT_EQ(data["memory"]["worst_device"]["total"].get<int64_t>(), winner.estimate.memory.Worst().total);
  const Json& points = data["suggest"]["points"];
  ASSERT_EQ(points.size(), result->ranked.size());
  for (size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i][0].get<size_t>(), i + 1);
    EXPECT_DOUBLE_EQ(points[i][1].get<double>(), result->ranked[i].estimate.step.step_time_s);
  }
  EXPECT_EQ(data["suggest"]["pareto_ranks"].size(), result->pareto.size());
}

ReportOptions PipelinedReport(const std::string& schedule, int64_t microbatches, bool hardware = true) {
  ReportOptions options;
  options.plan.mesh.axes = "pp=4,tp=2";
  options.plan.pipeline.schedule = schedule;
  options.plan.pipeline.supported = true;
  options.plan.pipeline.microbatches = microbatches;
  MemoryOptions memory;
  memory.mode = "train";
  memory.batch = 2 * microbatches;
  memory.seq = 2048;
  if (hardware) {
    memory.hardware = "h100-sxm";
  } else {
    memory.max_memory = "80GiB";
  }
  options.memory = memory;
  options.pricing.microbatches = microbatches;
  return options;
}

// A pipelined training step draws its schedule's timeline from cost's estimate of the same step: the
// page's figures are cost's, and its boxes those PipelineTimelineJson gives for that estimate.
TEST(ReportTest, PipelinedTrainingStepDrawsCostsTimeline) {
  auto model = LoadExample("llama-3.1-8b");
  for (const char* schedule : {"1f1b", "zero-bubble"}) {
    const ReportOptions options = PipelinedReport(schedule, 8);
    auto report = Report(model, options);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    const Json& t = report->data["pipeline"];
    ASSERT_TRUE(t.is_object()) << report->data["pipeline_note"];
    CostOptions cost_options;
    cost_options.plan = options.plan;
    cost_options.memory = *options.memory;
    cost_options.pricing.microbatches = 8;
    auto cost = Cost(model, cost_options);
    ASSERT_TRUE(cost.ok() && cost->estimate && cost->estimate->pipeline) << cost.status().ToString();
    // cost keeps no passes; simulated afresh, they are the ones report kept from its pricing.
    step::PipelineStep priced = *cost->estimate->pipeline;
    auto timeline = step::SimulateSchedule(cost->plan.pipeline, priced.microbatches, step::PipelineStageTimes(priced));
    ASSERT_TRUE(timeline.ok()) << timeline.status().ToString();
    priced.timeline = *timeline;
    auto expected = PipelineTimelineJson(priced, cost->plan.pipeline);
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    EXPECT_EQ(t, *expected) << schedule;
    EXPECT_DOUBLE_EQ(t["step_time_s"].get<double>(), cost->estimate->step.step_time_s);
    EXPECT_DOUBLE_EQ(report->data["cost"]["step_time_s"].get<double>(), cost->estimate->step.step_time_s);
    EXPECT_TRUE(report->data["pipeline_note"].is_null());
  }
}

TEST(ReportTest, PipelineWithoutAPricedTrainingStepSaysWhyItHasNoTimeline) {
  auto model = LoadExample("llama-3.1-8b");
  ReportOptions options;
  options.plan.mesh.axes = "pp=4,tp=2";
  options.plan.pipeline.supported = true;
  auto report = Report(model, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->data["pipeline"].is_null());
  EXPECT_NE(report->data["pipeline_note"].get<std::string>().find("--hardware"), std::string::npos);

  report = Report(model, PipelinedReport("1f1b", 8, /*hardware=*/false));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_NE(report->data["pipeline_note"].get<std::string>().find("--hardware"), std::string::npos);
  EXPECT_TRUE(report->data["memory"].is_object());

  ReportOptions serve = PipelinedReport("1f1b", 1);
  serve.memory->mode = "prefill";
  serve.plan.pipeline.microbatches.reset();
  report = Report(model, serve);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->data["cost"].is_null());
  EXPECT_NE(report->data["pipeline_note"].get<std::string>().find("a pipelined serving step is not priced"),
            std::string::npos)
      << report->data["pipeline_note"];

  // A non-pipelined plan has neither.
  ReportOptions flat;
  flat.plan.mesh.axes = "dp=1,fsdp=8,ep=1,tp=1,sp=1";
  report = Report(model, flat);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->data["pipeline"].is_null());
  EXPECT_TRUE(report->data["pipeline_note"].is_null());
}

TEST(ReportTest, TooFewMicrobatchesForTheScheduleAreRefusedAsCostRefusesThem) {
  auto model = LoadExample("llama-3.1-8b");
  auto report = Report(model, PipelinedReport("1f1b", 2));
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().kind(), ErrorKind::kBadInput);
  EXPECT_NE(report.status().diag().message.find("--microbatches 2 is fewer than the 4 pipeline stages"),
            std::string::npos)
      << report.status().ToString();
}

// Past 4,096 devices the mesh is drawn in blocks of consecutive devices, each with its devices' least and
// most bytes.
TEST(ReportTest, LargeMeshesAggregateIntoBlocksOfConsecutiveDevices) {
  auto model = LoadExample("llama-3.1-8b");
  ReportOptions options;
  options.plan.mesh.axes = "dp=3,fsdp=1024,ep=1,tp=4,sp=1";
  auto report = Report(model, options);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  auto plan = PlanModel(model, options.plan);
  ASSERT_TRUE(plan.ok());
  const std::vector<int64_t>& bytes = plan->plan.device_bytes;
  ASSERT_EQ(bytes.size(), 12'288u);
  const Json& blocks = report->data["devices"]["blocks"];
  const int64_t size = blocks["size"].get<int64_t>();
  EXPECT_EQ(size, 3);  // the smallest divisor of 12,288 that leaves at most 4,096 blocks
  ASSERT_EQ(blocks["max"].size(), 4'096u);
  for (size_t b = 0; b < 4'096; ++b) {
    const auto first = bytes.begin() + static_cast<std::ptrdiff_t>(b) * size;
    EXPECT_EQ(blocks["max"][b].get<int64_t>(), *std::max_element(first, first + size));
    EXPECT_EQ(blocks["min"][b].get<int64_t>(), *std::min_element(first, first + size));
  }
}

// issue 36: the page's JSON was nlohmann's dump, which writes a NaN or an infinity as null.
TEST(ReportTest, NonFiniteFigureIsAnInternalErrorNotNull) {
  Json data = Json::object();
  data["estimate"] = {{"mfu", std::numeric_limits<double>::quiet_NaN()}};
  try {
    (void)ReportPage(data);
    ADD_FAILURE() << "a NaN reached the page";
  } catch (const NonFiniteFigure& e) {
    EXPECT_NE(std::string(e.what()).find("the output's /estimate/mfu is NaN"), std::string::npos) << e.what();
  }
}

// The text of the page's data element, as the HTML tokenizer ends it: at the first "</script".
std::string EmbeddedData(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"easyplan-data\">";
  const size_t start = page.find(open);
  if (start == std::string::npos) return "";
  const size_t end = page.find("</script", start + open.size());
  return page.substr(start + open.size(), end == std::string::npos ? std::string::npos : end - start - open.size());
}

TEST(ReportTest, CandidatePageIsPricedAsTheSearchPricedIt) {
  // suggest --report draws its winner with the search's whole pricing group: --torus and --precision were
  // once dropped field by field, and the page priced another slice than the ranking did.
  SuggestOptions search;
  search.memory.mode = "train";
  search.pricing.precision = "fp8";
  search.pricing.torus = "4x4x8";
  Candidate candidate;
  candidate.axis_names = {"dp", "fsdp", "ep", "tp", "sp"};
  candidate.mesh = {1, 128, 1, 1, 1};
  candidate.dcn = {1, 1, 1, 1, 1};
  candidate.microbatches = 4;
  const ReportOptions page = CandidateReportOptions(search, candidate);
  EXPECT_EQ(page.pricing.torus, "4x4x8");
  EXPECT_EQ(page.pricing.precision, "fp8");
  EXPECT_EQ(page.pricing.microbatches, 4);
}

TEST(ReportTest, DataCannotCloseThePageScript) {
  Json data = Json::object();
  data["model_type"] = "</script><script>alert(1)</script>";
  const std::string embedded = EmbeddedData(ReportPage(data));
  EXPECT_EQ(Json::parse(embedded), data);
  EXPECT_EQ(embedded.find('<'), std::string::npos) << embedded;
}

// issue 44 item 7: a tensor named "z/<!--<script>/w" (checkpoint metadata, a --tree file) put the tokenizer
// in the script's double-escaped state, where "</script>" no longer ends the element: the page was blank.
// The data holds no '<', '>' or '&' now, and the tokenizer's element text parses back to the same data.
TEST(ReportTest, HostileTensorNamesRoundTripThroughThePage) {
  Json data = Json::object();
  data["tensors"] = {{"templates",
                      {"z/<!--<script>/w", "a/</script >/b", "c/<!-- -->/d&amp;",
                       "e\xE2\x80\xA8"
                       "f"}}};
  const std::string page = ReportPage(data);
  const std::string embedded = EmbeddedData(page);
  for (const char c : {'<', '>', '&'}) EXPECT_EQ(embedded.find(c), std::string::npos) << c << " in " << embedded;
  EXPECT_EQ(Json::parse(embedded), data);
  // The page's own script follows the data element, intact.
  EXPECT_NE(page.find("JSON.parse(document.getElementById(\"easyplan-data\").textContent)"), std::string::npos);
}

// A --rules or --hardware path is bytes (a Linux file name need not be UTF-8) and lands in the data: the
// page used to throw nlohmann's type_error 316 out of dump(), exit 3 on user input.
TEST(ReportTest, PathThatIsNotUtf8IsWrittenAsEmitJsonWritesIt) {
  Json data = Json::object();
  data["rules"] = "/tmp/r\xff.yaml";
  const std::string page = ReportPage(data);
  EXPECT_NE(page.find("\"rules\":\"/tmp/r\xEF\xBF\xBD.yaml\""), std::string::npos);  // U+FFFD
}

// The page draws the pipeline's timeline from its data: a section for it, and the script that fills it.
TEST(ReportTest, TemplateHasThePipelineTimelineSection) {
  const std::string_view page = ReportTemplate();
  EXPECT_NE(page.find("id=\"pipeline-section\" hidden"), std::string_view::npos);
  EXPECT_NE(page.find("function drawPipeline()"), std::string_view::npos);
  EXPECT_NE(page.find("drawPipeline();"), std::string_view::npos);
  EXPECT_NE(page.find("id=\"pipeline-note\""), std::string_view::npos);
}

TEST(ReportTest, TemplateHasTheDataMarkerAndNoNetworkReference) {
  const std::string_view page = ReportTemplate();
  EXPECT_NE(page.find("__EASYPLAN_DATA__"), std::string::npos);
  // The one URL is the SVG namespace, which names elements and is never fetched.
  const std::string_view svg = "http://www.w3.org/2000/svg";
  for (size_t at = page.find("http"); at != std::string_view::npos; at = page.find("http", at + 1)) {
    EXPECT_EQ(page.substr(at, svg.size()), svg) << page.substr(at, 60);
  }
}

}  // namespace
}  // namespace easyplan::api
