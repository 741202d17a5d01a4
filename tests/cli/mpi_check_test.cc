// `check --engine mpi` as users launch it: `mpirun --oversubscribe -np K easyplan check ...`. Every case
// runs the in-process engine and the MPI engine on the same config and mesh and requires the same
// verdict, the same collectives with the same byte counts, and the MPI engine's own comparison
// against the in-process rerun within tolerance. The fault cases end with exit 2 or 3 and a message,
// never a hang (ctest's timeout would catch one).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs `command` from the source directory with easyplan's binary as $EASYPLAN.
RunResult RunShell(const std::string& command) {
  const std::string stem = (fs::temp_directory_path() / ("easyplan-mpi-" + std::to_string(::getpid()))).string();
  const std::string shell = std::string("cd '") + EASYPLAN_SOURCE_DIR + "' && EASYPLAN='" + EASYPLAN_BINARY + "' && " +
                            command + " </dev/null >'" + stem + ".out' 2>'" + stem + ".err'";
  const int raw = std::system(shell.c_str());
  RunResult run;
  run.exit_code = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  run.out = easyplan::testing::ReadTestFile(stem + ".out");
  run.err = easyplan::testing::ReadTestFile(stem + ".err");
  fs::remove(stem + ".out");
  fs::remove(stem + ".err");
  return run;
}

// mpirun with K processes on this machine's cores, however few (--oversubscribe). Open MPI refuses to
// start as root without being told; CI runs as root in a container. `options` go to mpirun (`-x NAME=V`
// sets a variable in every rank).
std::string Mpirun(int processes, const std::string& options = "") {
  std::string command = std::string("'") + EASYPLAN_MPIRUN + "' --oversubscribe -np " + std::to_string(processes);
  if (::geteuid() == 0) command += " --allow-run-as-root";
  if (!options.empty()) command += " " + options;
  return command + " \"$EASYPLAN\" ";
}

// RunShell, and how long it took in seconds. A job that hangs is stopped after 30 s (mpirun passes the
// SIGTERM on to every rank, mpirun(1) "Signal Propagation") and fails with exit 124. So that a hang
// seen only on another machine can be read afterwards, a job still running at 25 s has the processes
// as they were then (pid, parent, group, state, where each waits, name) appended to its error output,
// after a line naming the shell that ran it.
constexpr char kSnapshotMarker[] = "--- processes at 25 s, under shell ";

RunResult RunTimed(const std::string& command, double* seconds) {
  const auto start = std::chrono::steady_clock::now();
  RunResult run =
      RunShell(std::string("{ (sleep 25 && echo \"") + kSnapshotMarker +
               "$$\" >&2 && ps -eo pid=,ppid=,pgid=,stat=,wchan:24=,comm= >&2) & snapshot=$!; "
               "timeout -k 5 30 " +
               command + "; status=$?; pkill -P $snapshot 2>/dev/null; kill $snapshot 2>/dev/null; exit $status; }");
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

// The rank processes a job still had at 25 s: every process under the launcher (the child of
// `timeout`) in RunTimed's snapshot, as "pid state name". Empty when the job had no snapshot or no
// rank was left.
std::vector<std::string> RanksAliveAt25s(const std::string& err) {
  const size_t at = err.find(kSnapshotMarker);
  if (at == std::string::npos) return {};
  struct Process {
    long ppid;
    std::string state, name;
  };
  std::map<long, Process> processes;
  std::istringstream lines(err.substr(at + std::string(kSnapshotMarker).size()));
  std::string line;
  std::getline(lines, line);  // the shell's pid
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::vector<std::string> words;
    for (std::string word; fields >> word;) words.push_back(word);
    if (words.size() < 5 || words[0].find_first_not_of("0123456789") != std::string::npos) break;
    processes[std::stol(words[0])] = Process{std::stol(words[1]), words[3], words.back()};
  }
  std::vector<std::string> ranks;
  for (const auto& [pid, process] : processes) {
    // A rank's parent is the launcher, whose parent is `timeout`.
    const auto parent = processes.find(process.ppid);
    if (parent == processes.end()) continue;
    const auto grandparent = processes.find(parent->second.ppid);
    if (grandparent != processes.end() && grandparent->second.name == "timeout") {
      ranks.push_back(std::to_string(pid) + " " + process.state + " " + process.name);
    }
  }
  return ranks;
}

// A timed job ended with `code` within `within` seconds. One exception: Open MPI 4.1's mpirun can
// itself hang after it has aborted a job (open-mpi/ompi issue 3380 shows the same "Per user-direction,
// the job has been aborted" banner followed by a hang; the project fixes no such races on the 4.x
// branches, issue 7833). Then the test requires what easyplan controls: by 25 s every rank process had
// ended.
void ExpectJobEnded(const RunResult& run, double seconds, const std::vector<int>& codes, double within,
                    const std::string& what = "") {
  if (run.err.find(kSnapshotMarker) != std::string::npos && seconds >= 30) {
    const std::vector<std::string> alive = RanksAliveAt25s(run.err);
    EXPECT_TRUE(alive.empty()) << what << "ranks still running at 25 s: " << ::testing::PrintToString(alive) << "\n"
                               << run.err;
    return;
  }
  EXPECT_NE(std::find(codes.begin(), codes.end(), run.exit_code), codes.end())
      << what << "exit " << run.exit_code << ", expected one of " << ::testing::PrintToString(codes) << "\n"
      << run.err;
  EXPECT_LT(seconds, within) << what << run.err;
}
void ExpectJobEnded(const RunResult& run, double seconds, int code, double within, const std::string& what = "") {
  ExpectJobEnded(run, seconds, std::vector<int>{code}, within, what);
}

// The start-up deadline of the timed fault jobs. A job then ends within kStartUp + its --mpi-timeout +
// mpirun's teardown whatever the machine's load: a slow start-up spends kStartUp, never the deadline of
// the fault under test, which is counted from the start of its own wait.
constexpr int kStartUp = 10;
const std::string kStartUpFlag = " --mpi-start-timeout " + std::to_string(kStartUp) + " ";

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct Case {
  std::string example;  ///< examples/<example>/config.json
  std::string mesh;
  int processes;
  std::string extra;  ///< more flags
};

std::string NameOf(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.example + "_" + info.param.mesh + "_np" + std::to_string(info.param.processes);
  if (!info.param.extra.empty()) name += "_" + info.param.extra;
  return easyplan::testing::TestNameOf(name);
}

class MpiEngineTest : public ::testing::TestWithParam<Case> {};

TEST_P(MpiEngineTest, AgreesWithTheInProcessEngine) {
  const Case& c = GetParam();
  const std::string args =
      "check examples/" + c.example + "/config.json --mesh " + c.mesh + " --level numeric --format json " + c.extra;
  const RunResult in_process = RunShell("\"$EASYPLAN\" " + args);
  const RunResult mpi = RunShell(Mpirun(c.processes) + args + " --engine mpi");
  ASSERT_EQ(in_process.exit_code, 0) << in_process.err;
  ASSERT_EQ(mpi.exit_code, 0) << mpi.err;
  EXPECT_EQ(mpi.err, "");
  const json a = json::parse(in_process.out);
  const json b = json::parse(mpi.out);  // one report: only rank 0 writes
  const json& na = a["numeric"];
  const json& nb = b["numeric"];
  EXPECT_TRUE(nb["ok"]);
  // The same collectives, byte for byte, from the buffers handed to MPI.
  EXPECT_EQ(na["communication"], nb["communication"]);
  EXPECT_FALSE(nb["communication"]["collectives"].empty());
  // Every output within tolerance of the unsharded reference, as in process.
  ASSERT_EQ(na["comparisons"].size(), nb["comparisons"].size());
  for (size_t i = 0; i < na["comparisons"].size(); ++i) {
    const json& x = nb["comparisons"][i];
    EXPECT_EQ(na["comparisons"][i]["name"], x["name"]);
    EXPECT_TRUE(x["ok"]) << x.dump();
    EXPECT_LE(x["nmse"].get<double>(), x["max_nmse"].get<double>());
  }
  // The MPI run against the in-process rerun of the same shards.
  const json& e = nb["engine"];
  EXPECT_EQ(e["name"], "mpi");
  EXPECT_EQ(e["processes"], c.processes);
  EXPECT_EQ(e["devices_per_process"].get<int>() * c.processes, b["devices"].get<int>());
  EXPECT_EQ(e["collectives_difference"], "");
  EXPECT_EQ(e["collectives_compared"], nb["communication"]["collectives"].size());
  EXPECT_LE(e["max_nmse"].get<double>(), e["nmse_tol"].get<double>());
  EXPECT_LE(e["max_abs_diff"].get<double>(), e["abs_tol"].get<double>());
  EXPECT_TRUE(e["ok"]);
  if (a.contains("memory")) {  // the figures the root gathered equal those measured in process
    EXPECT_EQ(a["memory"], b["memory"]);
  }
}

// The CI set: llama, mixtral and deepseek_v3 on three meshes each at one device per rank, then several
// devices per rank (K < devices), which exercises groups split between a rank's own devices and others.
INSTANTIATE_TEST_SUITE_P(
    OneDevicePerRank, MpiEngineTest,
    ::testing::Values(Case{"llama-3.1-8b", "fsdp=2,tp=4", 8, ""}, Case{"llama-3.1-8b", "dp=2,fsdp=2,tp=2", 8, ""},
                      Case{"llama-3.1-8b", "fsdp=2,tp=2,sp=2", 8, "--memory"}, Case{"mixtral-8x7b", "ep=2,tp=4", 8, ""},
                      Case{"mixtral-8x7b", "fsdp=2,ep=2,tp=2", 8, ""}, Case{"mixtral-8x7b", "dp=2,ep=4", 8, "--memory"},
                      Case{"deepseek-v3", "ep=4,tp=2", 8, ""}, Case{"deepseek-v3", "fsdp=2,ep=2,tp=2", 8, ""},
                      Case{"deepseek-v3", "dp=2,ep=2,tp=2", 8, ""}),
    NameOf);
INSTANTIATE_TEST_SUITE_P(SeveralDevicesPerRank, MpiEngineTest,
                         ::testing::Values(Case{"llama-3.1-8b", "fsdp=2,tp=4", 2, ""},
                                           Case{"mixtral-8x7b", "fsdp=2,ep=2,tp=2", 4, ""},
                                           Case{"deepseek-v3", "fsdp=2,ep=2,tp=4", 8, ""}),
                         NameOf);

// Pipelined plans (docs/PIPELINE.md): each rank runs only its stage's layers, and the hidden state
// crosses each stage boundary by MPI point to point between the ranks of matching devices. One device per
// rank, two ranks of one stage each, one rank with both stages (tp=2,pp=2 over 2 ranks: each rank's block
// is a tp coordinate across every stage), interleaved chunks crossing back and forth, and MoE models.
const auto kPipelinedCases =
    ::testing::Values(Case{"llama-3.1-8b", "pp=2,tp=2", 4, ""}, Case{"llama-3.1-8b", "pp=2,tp=2", 2, ""},
                      Case{"llama-3.1-8b", "tp=2,pp=2", 2, ""},
                      Case{"llama-3.1-8b", "pp=2,tp=2", 4, "--pp-schedule interleaved --virtual-stages 2"},
                      Case{"deepseek-v3", "pp=2,ep=2,tp=2", 8, ""}, Case{"mixtral-8x7b", "fsdp=2,pp=2,ep=2", 4, ""});
INSTANTIATE_TEST_SUITE_P(Pipelined, MpiEngineTest, kPipelinedCases, NameOf);

class MpiPipelineTest : public ::testing::TestWithParam<Case> {};

TEST_P(MpiPipelineTest, ReportsEveryStageSend) {
  const Case& c = GetParam();
  const RunResult mpi = RunShell(Mpirun(c.processes) + "check examples/" + c.example + "/config.json --mesh " + c.mesh +
                                 " --level numeric --format json --engine mpi " + c.extra);
  ASSERT_EQ(mpi.exit_code, 0) << mpi.err;
  const json report = json::parse(mpi.out);
  const json& pipeline = report["numeric"]["pipeline"];
  // One boundary per pair of consecutive model chunks, each recorded with its stages.
  const int chunks = pipeline["stages"].get<int>() * pipeline["virtual_stages"].get<int>();
  EXPECT_EQ(pipeline["boundaries"], chunks - 1);
  int send_recv = 0;
  for (const json& r : report["numeric"]["communication"]["collectives"]) {
    ASSERT_TRUE(r.contains("stage")) << r.dump();
    send_recv += r["kind"] == "send/recv";
  }
  EXPECT_EQ(send_recv, chunks - 1);
}

INSTANTIATE_TEST_SUITE_P(Pipelined, MpiPipelineTest, kPipelinedCases, NameOf);

const char kLlama[] = "check examples/llama-3.1-8b/config.json --mesh fsdp=2,tp=4 --level numeric ";

TEST(MpiEngineFaults, PipelinedMutationsStillFail) {
  for (const char* fault : {"drop-stage-send", "corrupt-shard", "drop-all-reduce"}) {
    const std::string args =
        std::string("check examples/llama-3.1-8b/config.json --mesh pp=2,tp=2 --level numeric --inject ") + fault;
    const RunResult in_process = RunShell("\"$EASYPLAN\" " + args);
    const RunResult mpi = RunShell(Mpirun(4) + args + " --engine mpi");
    EXPECT_EQ(in_process.exit_code, 1) << fault << in_process.err;
    EXPECT_EQ(mpi.exit_code, 1) << fault << mpi.err;
    EXPECT_EQ(Count(mpi.out, "check: FAIL"), 1) << fault << "\nstdout:\n" << mpi.out << "\nstderr:\n" << mpi.err;
  }
}

TEST(MpiEngineFaults, StalledStageEndsTheSendRecvAfterTheTimeout) {
  // Interleaved chunks on 2 ranks, one stage each: the last rank stalls at its first call, a stage
  // boundary, and rank 0's send/recv with it waits out the deadline like any collective.
  double seconds = 0;
  const RunResult run = RunTimed(Mpirun(2) +
                                     "check examples/llama-3.1-8b/config.json --mesh pp=2,tp=2 --pp-schedule "
                                     "interleaved --virtual-stages 2 --level numeric --engine mpi --inject rank-stall "
                                     "--mpi-timeout 2" +
                                     kStartUpFlag,
                                 &seconds);
  ExpectJobEnded(run, seconds, 3, kStartUp + 2 + 5);
  EXPECT_NE(run.err.find("rank 0 of 2 waited 2 s for send/recv over (pp) in layer "), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
}

TEST(MpiEngineFaults, InjectedPlanMutationsStillFail) {
  for (const char* fault : {"corrupt-shard", "offset-block", "drop-all-reduce", "wrong-dim", "swap-tuple-order"}) {
    // fsdp and sp together: swap-tuple-order needs an entry of two axes larger than 1.
    const std::string args =
        std::string("check examples/llama-3.1-8b/config.json --mesh fsdp=2,tp=2,sp=2 --inject ") + fault;
    const RunResult in_process = RunShell("\"$EASYPLAN\" " + args);
    const RunResult mpi = RunShell(Mpirun(8) + args + " --engine mpi");
    EXPECT_EQ(in_process.exit_code, 1) << fault << in_process.err;
    EXPECT_EQ(mpi.exit_code, 1) << fault << mpi.err;
    EXPECT_EQ(Count(mpi.out, "check: FAIL"), 1) << fault << "\nstdout:\n" << mpi.out << "\nstderr:\n" << mpi.err;
  }
}

TEST(MpiEngineFaults, ProcessCountThatDoesNotDivideTheDevicesIsBadInput) {
  const RunResult run = RunShell(Mpirun(3) + kLlama + "--engine mpi");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_EQ(Count(run.err, "easyplan: error: mpirun -np 3 cannot run mesh"), 1) << run.err;  // the root alone
  EXPECT_NE(run.err.find("launch with -np one of 1, 2, 4, 8"), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
}

TEST(MpiEngineFaults, ProcessBlocksThatAreNotSubMeshesAreBadInput) {
  // 6 devices (dp=3, tp=2) over 2 processes: 3 devices each cut a tp pair in half.
  const RunResult run =
      RunShell(Mpirun(2) + "check examples/llama-3.1-8b/config.json --mesh dp=3,tp=2 --level numeric --engine mpi");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("its 3 devices per process are not a block of the mesh's axes"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("launch with -np one of 1, 3, 6"), std::string::npos) << run.err;
}

TEST(MpiEngineFaults, OutsideMpirunSaysHowToLaunch) {
  const RunResult run = RunShell(std::string("\"$EASYPLAN\" ") + kLlama + "--engine mpi");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--engine mpi runs under mpirun"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("mpirun -np 8 easyplan check"), std::string::npos) << run.err;
}

TEST(MpiEngineFaults, EngineFaultsNeedTheMpiEngine) {
  const RunResult run = RunShell(std::string("\"$EASYPLAN\" ") + kLlama + "--inject rank-crash");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--inject rank-crash is a fault of the MPI engine"), std::string::npos) << run.err;
}

TEST(MpiEngineFaults, CrashedRankEndsTheRunWithExit3) {
  const RunResult run = RunShell(Mpirun(8) + kLlama + "--engine mpi --inject rank-crash");
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("rank 7 of 8 crashed (signal 11)"), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
}

// A rank sent SIGTERM by anyone but the launcher (kill, a batch scheduler) names itself and the sender
// (issue 44: the root blamed "another rank").
TEST(MpiEngineFaults, RankSentSigtermSaysSoItself) {
  const RunResult run = RunShell(Mpirun(8) + kLlama + "--engine mpi --inject rank-term");
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("easyplan: error: rank 7 of 8 was sent SIGTERM by process "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("; the MPI check did not finish"), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
}

TEST(MpiEngineFaults, StalledRankTimesOutWithExit3) {
  const RunResult run = RunShell(Mpirun(8) + kLlama + "--engine mpi --inject rank-stall --mpi-timeout 2");
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("rank 0 of 8 waited 2 s for all-reduce over (tp) in layer 0"), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
}

// A loaded machine starts some ranks late. The hook EASYPLAN_TEST_MPI_SLOW_START makes the last rank
// start 3 s late, twice (before MPI_Init and before the check starts), longer than the 2 s deadline of
// the stall under test: that deadline must govern the stalled collective alone (issue 44, item 14: this
// test's stall once timed out inside MPI_Init instead).
TEST(MpiEngineFaults, SlowStartUpDoesNotSpendTheStallsDeadline) {
  const RunResult run = RunShell(Mpirun(8, "-x EASYPLAN_TEST_MPI_SLOW_START=3") + kLlama +
                                 "--engine mpi --inject rank-stall --mpi-timeout 2");
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("rank 0 of 8 waited 2 s for all-reduce over (tp) in layer 0"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("MPI_Init"), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
}

TEST(MpiEngineFaults, KilledRankEndsTheRunAndTheRootSaysSo) {
  // SIGKILL runs no handler: mpirun exits with the first failure it sees, the killed rank's 128 + 9, or
  // the root's 3 when the root noticed the death first (a fresh-clone CI run saw 3 in 1 attempt of 4:
  // "the first process to do so was [..],0, exit code 3"); the root says so itself before mpirun's
  // teardown (whose SIGTERM often comes too late for output to get out). Several runs: the root's line
  // used to go missing in 3 runs of 6.
  for (int attempt = 0; attempt < 4; ++attempt) {
    double seconds = 0;
    const RunResult run =
        RunTimed(Mpirun(8) + kLlama + "--engine mpi --inject rank-kill --mpi-timeout 3" + kStartUpFlag, &seconds);
    ExpectJobEnded(run, seconds, {137, 3}, kStartUp + 3 + 5, "attempt " + std::to_string(attempt) + ":\n");
    EXPECT_NE(run.err.find("rank 0 of 8: rank 7 stopped answering (its process ended); the check did not finish"),
              std::string::npos)
        << "attempt " << attempt << ":\n"
        << run.err;
    EXPECT_EQ(run.out, "");
  }
}

// The snapshot a job still running at 25 s leaves (RunTimed) names the ranks left under the launcher,
// and none when only the launcher is left: what ExpectJobEnded tells a hung mpirun by.
TEST(MpiTestHarness, SnapshotNamesTheRanksLeftUnderTheLauncher) {
  const std::string header = std::string("check: pass\n") + kSnapshotMarker + "19879\n";
  const std::string shell_and_launcher =
      "19879 19877 19877 S    do_wait                  sh\n"
      "19881 19879 19881 S    sigsuspend.isra.0        timeout\n"
      "19883 19881 19881 S    do_wait                  mpirun\n";
  EXPECT_EQ(RanksAliveAt25s(header + shell_and_launcher +
                            "19884 19883 19881 T    do_signal_stop           easyplan\n"
                            "19885 19883 19881 S    hrtimer_nanosleep        easyplan\n"
                            "19886 19884 19881 S    -                        ps\n"),
            (std::vector<std::string>{"19884 T easyplan", "19885 S easyplan"}));
  EXPECT_TRUE(RanksAliveAt25s(header + shell_and_launcher).empty());
  EXPECT_TRUE(RanksAliveAt25s("no snapshot\n").empty());
}

// Every blocking MPI call has the deadline (docs/CHECK.md, "Faults end the run"). The job ends within
// the timeout plus a few seconds of mpirun's teardown, exit 3, naming the call.
TEST(MpiEngineDeadlines, RankStoppedAtStartUpEndsTheJobAfterTheTimeout) {
  // The last rank stops (SIGSTOP) before easyplan starts, so the others wait in MPI_Init.
  std::string command = Mpirun(8);
  command.replace(command.rfind("\"$EASYPLAN\""), std::string("\"$EASYPLAN\"").size(),
                  "sh -c 'if [ \"$OMPI_COMM_WORLD_RANK\" = 7 ]; then kill -STOP $$; fi; exec \"$0\" \"$@\"' "
                  "\"$EASYPLAN\"");
  double seconds = 0;
  const RunResult run = RunTimed(command + kLlama + "--engine mpi --mpi-start-timeout 3", &seconds);
  ExpectJobEnded(run, seconds, 3, 3 + kStartUp);
  // Before MPI_Init no rank has reported its process; rank 0 finds rank 7 as the launcher's other child.
  EXPECT_NE(run.err.find("easyplan: error: rank 0 of 8 waited 3 s for MPI_Init: rank 7 stopped answering (its process "
                         "is stopped, as by SIGSTOP); the check did not finish (--mpi-start-timeout sets the wait)"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.out, "");
}

// When rank 0 is the one stopped, another rank reports, and names it (issue 44: a stopped rank was not
// named).
TEST(MpiEngineDeadlines, StoppedRootIsNamedByTheRankThatReports) {
  std::string command = Mpirun(4);
  command.replace(command.rfind("\"$EASYPLAN\""), std::string("\"$EASYPLAN\"").size(),
                  "sh -c 'if [ \"$OMPI_COMM_WORLD_RANK\" = 0 ]; then kill -STOP $$; fi; exec \"$0\" \"$@\"' "
                  "\"$EASYPLAN\"");
  double seconds = 0;
  const RunResult run = RunTimed(command + kLlama + "--engine mpi --mpi-start-timeout 3", &seconds);
  ExpectJobEnded(run, seconds, 3, 3 + 2 + kStartUp);
  EXPECT_NE(run.err.find("waited 5 s for MPI_Init: rank 0 stopped answering (its process is stopped, as by SIGSTOP); "
                         "the check did not finish (--mpi-start-timeout sets the wait)"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.out, "");
}

// The test hook EASYPLAN_TEST_MPI_STOP stops the last rank with SIGSTOP just before a blocking call
// easyplan makes, as a frozen process would.
TEST(MpiEngineDeadlines, RankStoppedBeforeCommSplitIsNamed) {
  double seconds = 0;
  const RunResult run = RunTimed(
      Mpirun(8, "-x EASYPLAN_TEST_MPI_STOP=split") + kLlama + "--engine mpi --mpi-timeout 3" + kStartUpFlag, &seconds);
  ExpectJobEnded(run, seconds, 3, kStartUp + 3 + 5);
  EXPECT_NE(run.err.find("easyplan: error: rank 0 of 8 waited 3 s for MPI_Comm_split (the communicator over ("),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("rank 7 stopped answering (its process is stopped, as by SIGSTOP); the check did not finish"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.out, "");
}

TEST(MpiEngineDeadlines, RankStoppedAfterTheResultEndsTheJobAndTheResultStands) {
  double seconds = 0;
  const RunResult run =
      RunTimed(Mpirun(8, "-x EASYPLAN_TEST_MPI_STOP=finalize") + kLlama + "--engine mpi --mpi-timeout 3" + kStartUpFlag,
               &seconds);
  EXPECT_EQ(Count(run.out, "check: pass"), 1) << run.out;
  EXPECT_NE(run.err.find("easyplan: error: rank 0 of 8 waited 3 s for MPI_Finalize: rank 7 stopped answering (its "
                         "process is stopped, as by SIGSTOP); the check finished and its output above stands, but the "
                         "job did not end cleanly"),
            std::string::npos)
      << run.err;
  // The check itself takes a few seconds here; the stall costs the timeout and mpirun's teardown (5 s in
  // all on an idle machine). The stopped rank resumes by itself after 8 s (docs/CHECK.md), so the job
  // ends even where mpirun cannot end it, when that rank's own 5 s deadline passes.
  ExpectJobEnded(run, seconds, 3, 25);
}

TEST(MpiEngineDeadlines, UnknownStopPointIsBadInput) {
  const RunResult run = RunShell(Mpirun(2, "-x EASYPLAN_TEST_MPI_STOP=later") + kLlama + "--engine mpi");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("EASYPLAN_TEST_MPI_STOP is 'later', expected split or finalize"), std::string::npos)
      << run.err;
}

TEST(MpiEngineDeadlines, SlowStartHookTakesSecondsOnly) {
  const RunResult run = RunShell(Mpirun(2, "-x EASYPLAN_TEST_MPI_SLOW_START=3s") + kLlama + "--engine mpi");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("EASYPLAN_TEST_MPI_SLOW_START is '3s', expected seconds from 0 to 60"), std::string::npos)
      << run.err;
}

TEST(MpiEngineFaults, RankDisagreeingWithTheLauncherIsPrintedBeforeTheAbort) {
  // Each rank claims the other's rank: the launcher's variables and MPI disagree.
  std::string command = std::string("'") + EASYPLAN_MPIRUN + "' --oversubscribe -np 2";
  if (::geteuid() == 0) command += " --allow-run-as-root";
  command += " sh -c 'OMPI_COMM_WORLD_RANK=$((1 - OMPI_COMM_WORLD_RANK)) exec \"$0\" \"$@\"' \"$EASYPLAN\" ";
  const RunResult run = RunShell(command + kLlama + "--engine mpi --mpi-timeout 3");
  EXPECT_EQ(run.exit_code, 3) << run.err;
  EXPECT_NE(run.err.find("easyplan: internal error: MPI says rank "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(", the launcher (Open MPI) rank "), std::string::npos) << run.err;
}

TEST(MpiEngineOutput, OnlyTheRootWritesTheOutputFile) {
  const fs::path out = fs::temp_directory_path() / ("easyplan-mpi-out-" + std::to_string(::getpid()) + ".txt");
  const RunResult run = RunShell(Mpirun(4) + kLlama + "--engine mpi -o '" + out.string() + "'");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "");
  const std::string text = easyplan::testing::ReadTestFile(out.string());
  EXPECT_EQ(Count(text, "check: pass"), 1) << text;
  EXPECT_NE(text.find("engine: mpi, 4 processes x 2 devices"), std::string::npos) << text;
  fs::remove(out);
}

}  // namespace
