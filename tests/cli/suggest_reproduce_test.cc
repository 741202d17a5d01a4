// `suggest` prints, per candidate, the `plan`, `memory` and `cost` commands that reproduce it
// (api::ReproduceCommands). This runs each printed command through a shell, as a user pastes it, with the
// real binary, and checks that it gives the candidate's figures: the memory of the worst device (the
// `memory` command's microbatch and the `cost` command's step), the headroom under the same budget, and
// the step time. One case per kind of option that changes a figure (issue 36 item 5: the optimizer,
// --max-memory, --set, the step state's dtypes, --precision, --max-length, the modes, --slices).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/json.h"
#include "tests/test_util.h"

namespace {

namespace fs = std::filesystem;
using easyplan::Json;

struct ShellRun {
  int exit_code = -1;
  std::string out, err;
};

// Runs `command` (shell words; a leading "easyplan" is the binary under test) from the source directory.
ShellRun Shell(std::string command) {
  const std::string prefix = "easyplan ";
  if (command.rfind(prefix, 0) == 0)
    command = std::string("'") + EASYPLAN_BINARY + "' " + command.substr(prefix.size());
  const fs::path base = fs::temp_directory_path() / ("easyplan-reproduce-" + std::to_string(::getpid()));
  const std::string out = base.string() + ".stdout", err = base.string() + ".stderr";
  const std::string line =
      std::string("cd '") + EASYPLAN_SOURCE_DIR + "' && " + command + " </dev/null >'" + out + "' 2>'" + err + "'";
  const int raw = std::system(line.c_str());
  ShellRun run;
  run.exit_code = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  run.out = easyplan::testing::ReadTestFile(out);
  run.err = easyplan::testing::ReadTestFile(err);
  fs::remove(out);
  fs::remove(err);
  return run;
}

struct Case {
  std::string name;
  std::string args;        ///< suggest's, after `easyplan suggest`
  size_t candidates = 2;   ///< how many of the ranked candidates to reproduce
  bool pipelined = false;  ///< reproduce only pipelined candidates (a pp axis above 1)
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class SuggestReproduceTest : public ::testing::TestWithParam<Case> {};

TEST_P(SuggestReproduceTest, PrintedCommandsGiveTheCandidatesFigures) {
  const Case& c = GetParam();
  // @OVERRIDES@: an overrides file in a directory whose name needs quoting in a shell.
  std::string args = c.args;
  const fs::path dir = fs::temp_directory_path() / ("easyplan reproduce's " + std::to_string(::getpid()));
  if (const size_t at = args.find("@OVERRIDES@"); at != std::string::npos) {
    fs::create_directories(dir);
    std::ofstream(dir / "over rides.yaml") << "rope_theta: 100000.0\n";
    std::string quoted = "'";
    for (char ch : (dir / "over rides.yaml").string()) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    args.replace(at, std::string("@OVERRIDES@").size(), quoted + "'");
  }
  const ShellRun suggest = Shell("easyplan suggest " + args + " --format json");
  ASSERT_EQ(suggest.exit_code, 0) << args << "\n" << suggest.err;
  const Json result = Json::parse(suggest.out);
  const Json& candidates = result.at("candidates");
  ASSERT_FALSE(candidates.empty());
  size_t reproduced = 0;
  for (size_t i = 0; i < candidates.size() && reproduced < c.candidates; ++i) {
    const Json& candidate = candidates[i];
    if (c.pipelined && !candidate.contains("pp_schedule")) continue;
    ++reproduced;
    const Json& commands = candidate.at("commands");
    ASSERT_EQ(commands.size(), 3u);
    const std::string plan = commands[0].get<std::string>();
    const std::string memory = commands[1].get<std::string>();
    const std::string cost = commands[2].get<std::string>();
    SCOPED_TRACE("candidate #" + std::to_string(i + 1) + "\n  " + plan + "\n  " + memory + "\n  " + cost);

    const ShellRun planned = Shell(plan + " --summary");
    EXPECT_EQ(planned.exit_code, 0) << planned.err;

    const ShellRun memory_run = Shell(memory + " --format json");
    ASSERT_EQ(memory_run.exit_code, 0) << memory_run.err;
    const Json memory_json = Json::parse(memory_run.out);
    EXPECT_EQ(memory_json.at("worst").at("total").get<int64_t>(), candidate.at("memory_total").get<int64_t>());
    EXPECT_EQ(memory_json.at("budget_per_device").get<int64_t>() - memory_json.at("worst").at("total").get<int64_t>(),
              candidate.at("headroom").get<int64_t>());

    const ShellRun cost_run = Shell(cost + " --format json");
    ASSERT_EQ(cost_run.exit_code, 0) << cost_run.err;
    const Json cost_json = Json::parse(cost_run.out);
    EXPECT_EQ(cost_json.at("memory").at("total").get<int64_t>(), candidate.at("memory_total").get<int64_t>());
    EXPECT_EQ(cost_json.at("microbatches").get<int64_t>(), candidate.at("microbatches").get<int64_t>());
    const double step = candidate.at("step_time_s").get<double>();
    EXPECT_NEAR(cost_json.at("step_time_s").get<double>(), step, 1e-9 * step);
    EXPECT_NEAR(cost_json.at("mfu").get<double>(), candidate.at("mfu").get<double>(), 1e-9);
  }
  EXPECT_GT(reproduced, 0u) << "no candidate to reproduce";
  fs::remove_all(dir);
}

const std::string kGpt2 = "examples/gpt2 --devices 4 --hardware h100-sxm";
const std::string kLlama = "examples/llama-3.1-8b --devices 8 --hardware h100-sxm";

INSTANTIATE_TEST_SUITE_P(
    OptionSets, SuggestReproduceTest,
    ::testing::Values(
        Case{"optimizer_sgd", kLlama + " --batch 8 --seq 2048 --optimizer sgd"},
        Case{"max_memory", kGpt2 + " --batch 16 --seq 1024 --max-memory 3GiB"},
        Case{"step_state", kGpt2 + " --batch 8 --seq 1024 --optimizer lion --grad-dtype float32 "
                                   "--opt-state-dtype bfloat16 --master-weights"},
        Case{"set_and_quoting", kGpt2 + " --batch 8 --seq 512 --set gradient_checkpointing=nothing_saveable "
                                        "--set 'n_positions=2048' --uneven chunk"},
        Case{"precision_fp8", kLlama + " --batch 8 --seq 2048 --precision fp8"},
        Case{"decode_max_length", kGpt2 + " --mode decode --batch 8 --seq 256 --max-length 1024"},
        Case{"decode", kLlama + " --mode decode --batch 8 --seq 4096"},
        Case{"slices", "examples/gpt2 --devices 8 --slices 2 --hardware tpu-v5p --batch 16 --seq 512"},
        Case{"pipeline",
             "examples/llama-3.1-8b --devices 16 --slices 2 --hardware h100-sxm --batch 32 --seq 4096 "
             "--set attn_mechanism=flash_attn2 --max-pp 4 --top 500",
             2, /*pipelined=*/true},
        Case{"files_and_quoting",
             "examples/llama-3.1-8b --devices 8 --hardware tests/fixtures/hardware/custom-gpu.yaml --batch 8 "
             "--seq 2048 --rules rules/llama.yaml --overrides @OVERRIDES@ --defaults init",
             4},
        Case{"raised_layer_limit",
             kGpt2 + " --batch 8 --seq 256 --set n_layer=5000 --max-layers 5000 --max-memory 1024TiB", 1}),
    [](const ::testing::TestParamInfo<Case>& param) { return param.param.name; });

}  // namespace
