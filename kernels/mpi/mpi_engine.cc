// The MPI engine (kernels/mpi_engine.h): one process per rank, MPI's non-blocking collectives on one
// communicator per set of mesh axes, every wait polled against a deadline, and the blocking calls
// (MPI_Init, MPI_Comm_split, MPI_Finalize) watched by a thread with the same deadline.
#include "kernels/mpi_engine.h"

#include <fmt/format.h>
#include <mpi.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kernels/mpi_launch.h"
#include "kernels/stage_mesh.h"

namespace easyplan::kernels {
namespace {

// ---- Fatal signals ----
// What the handlers write: prepared when the engine starts, written with write(2), the only output
// a signal handler may make. Signal dispositions are process-wide, and so are these.
char crash_prefix[160];  // "easyplan: error: rank 3 of 8 crashed (signal "
char term_prefix[160];   // "easyplan: error: rank 3 of 8 was sent SIGTERM"
char stopped_message[400];
size_t crash_prefix_length = 0, term_prefix_length = 0, stopped_message_length = 0;

void WriteAll(const char* text, size_t length) {
  while (length > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, length);
    if (n <= 0) return;
    text += n;
    length -= static_cast<size_t>(n);
  }
}

void WriteNumber(long value) {
  char digits[24];
  size_t n = 0;
  for (long v = value; n < sizeof digits && (v > 0 || n == 0); v /= 10) digits[n++] = static_cast<char>('0' + v % 10);
  while (n > 0) WriteAll(&digits[--n], 1);
}

void OnCrash(int signal) {
  WriteAll(crash_prefix, crash_prefix_length);
  WriteNumber(signal);
  static const char kTail[] = "); the MPI check did not finish\n";
  WriteAll(kTail, sizeof kTail - 1);
  ::_exit(3);
}

// SIGTERM from the launcher (this process's parent: mpirun, or Open MPI's orted on another host) is the
// job's teardown after some rank failed: the root says so, the others end quietly. From anyone else (kill,
// a batch scheduler) this rank itself was stopped: it says so with the sender's process id, so the
// message names the rank and how, instead of the root blaming another rank. Every rank exits 3.
// getppid(2) is async-signal-safe (signal-safety(7)); si_pid is the sender's for kill(2) and sigqueue(3).
void OnTerm(int /*signal*/, siginfo_t* info, void* /*context*/) {
  const bool sent = info != nullptr && (info->si_code == SI_USER || info->si_code == SI_QUEUE);
  if (sent && info->si_pid == ::getppid()) {
    WriteAll(stopped_message, stopped_message_length);
    ::_exit(3);
  }
  WriteAll(term_prefix, term_prefix_length);
  if (sent) {
    static const char kBy[] = " by process ";
    WriteAll(kBy, sizeof kBy - 1);
    WriteNumber(info->si_pid);
  }
  static const char kTail[] = "; the MPI check did not finish\n";
  WriteAll(kTail, sizeof kTail - 1);
  ::_exit(3);
}

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

void InstallHandlers(int rank, int size) {
  crash_prefix_length = static_cast<size_t>(
      std::snprintf(crash_prefix, sizeof crash_prefix, "easyplan: error: rank %d of %d crashed (signal ", rank, size));
  term_prefix_length = static_cast<size_t>(
      std::snprintf(term_prefix, sizeof term_prefix, "easyplan: error: rank %d of %d was sent SIGTERM", rank, size));
  if (rank == 0) {
    stopped_message_length = static_cast<size_t>(
        std::snprintf(stopped_message, sizeof stopped_message,
                      "easyplan: error: rank 0 of %d: mpirun stopped the job before the check finished: another "
                      "rank failed or was killed, or mpirun itself was (that rank's own message or mpirun's says "
                      "which)\n",
                      size));
  }
  for (int s : kCrashSignals) ::signal(s, OnCrash);
  struct sigaction term {};
  term.sa_sigaction = OnTerm;
  term.sa_flags = SA_SIGINFO;
  sigemptyset(&term.sa_mask);
  ::sigaction(SIGTERM, &term, nullptr);
}

void RestoreHandlers() {
  for (int s : kCrashSignals) ::signal(s, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
}

// ---- What a rank can tell about the other ranks' processes ----
// MPI itself does not say which rank is missing from a collective, nor that a rank died (Open MPI
// without ULFM has no failure notification). On the same host a rank can look: /proc/<pid>/stat
// (proc(5)) gives a process's state, and a rank whose process is gone, or a zombie, has ended. Every
// rank learns every rank's process once MPI is up; before that (MPI_Init) it finds them as its siblings.

struct PeerProcess {
  uint64_t host = 0;  ///< HostKey() of its host; 0 unknown
  int64_t pid = 0;
};

// The same kernel (boot id) and the same pid namespace: there, a peer's pid names its process.
uint64_t HostKey() {
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(boot, id);
  char ns[64] = {};
  const ssize_t n = ::readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
  if (id.empty() || n <= 0) return 0;
  const uint64_t key = std::hash<std::string>{}(id + std::string(ns, static_cast<size_t>(n)));
  return key == 0 ? 1 : key;
}

enum class ProcessState { kRunning, kStopped, kEnded };

// proc(5): the state is the first field after the command name's closing parenthesis.
ProcessState StateOf(int64_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return ProcessState::kEnded;
  const size_t paren = line.rfind(')');
  const char state = paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : '?';
  if (state == 'Z' || state == 'X') return ProcessState::kEnded;
  if (state == 'T' || state == 't') return ProcessState::kStopped;
  return ProcessState::kRunning;
}

// The field of proc(5)'s stat after the state: the parent's process id; -1 when unreadable.
int64_t ParentOf(int64_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return -1;
  const size_t paren = line.rfind(')');
  if (paren == std::string::npos || paren + 4 >= line.size()) return -1;
  return std::strtoll(line.c_str() + paren + 4, nullptr, 10);
}

// The rank a launcher gave process `pid`, from its environment (/proc/<pid>/environ, which the same user
// may read); -1 when it has none.
int RankOf(int64_t pid) {
  std::ifstream environ("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string entry;
  while (std::getline(environ, entry, '\0')) {
    for (const char* name : {"OMPI_COMM_WORLD_RANK=", "PMI_RANK="}) {
      if (entry.rfind(name, 0) == 0)
        return static_cast<int>(std::strtol(entry.c_str() + std::strlen(name), nullptr, 10));
    }
  }
  return -1;
}

// Before MPI_Init no rank knows another's process, but a launcher starts the ranks of a host as its
// children (Open MPI's mpirun or orted, MPICH's proxy), each with its rank in its environment: this
// process's siblings that carry a rank are those ranks, even one stopped before it ran easyplan.
std::vector<PeerProcess> SiblingRanks(int self_rank, int size) {
  std::vector<PeerProcess> peers(static_cast<size_t>(size));
  const int64_t parent = ::getppid(), self = ::getpid();
  const int me = self_rank;
  const uint64_t host = HostKey();
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int64_t pid = std::strtoll(name.c_str(), nullptr, 10);
    if (pid == self || ParentOf(pid) != parent) continue;
    const int rank = RankOf(pid);
    if (rank >= 0 && rank < size) peers[static_cast<size_t>(rank)] = {host, pid};
  }
  peers[static_cast<size_t>(me)] = {host, self};
  return peers;
}

// "rank 7 stopped answering (its process ended)" for every other rank on this rank's host whose process
// ended (or, unless `ended_only`, is stopped); empty when this rank can tell nothing.
std::string DiagnosePeers(const std::vector<PeerProcess>& peers, int self, bool ended_only) {
  if (peers.empty() || self < 0 || static_cast<size_t>(self) >= peers.size()) return "";
  const uint64_t host = peers[static_cast<size_t>(self)].host;
  std::vector<std::string> found;
  for (size_t r = 0; r < peers.size() && host != 0; ++r) {
    if (r == static_cast<size_t>(self) || peers[r].host != host || peers[r].pid <= 0) continue;
    const ProcessState state = StateOf(peers[r].pid);
    if (state == ProcessState::kEnded) {
      found.push_back(fmt::format("rank {} stopped answering (its process ended)", r));
    } else if (state == ProcessState::kStopped && !ended_only) {
      found.push_back(fmt::format("rank {} stopped answering (its process is stopped, as by SIGSTOP)", r));
    }
  }
  return fmt::format("{}", fmt::join(found, "; "));
}

// ---- Deadlines ----
// Two deadlines. Start-up (MPI_Init, every rank's process report, and the barrier where every rank
// starts the check) takes as long as the machine needs to start K processes and read the config K
// times, seconds late on a loaded machine. Every later wait is a step of the check, where the ranks
// run in lockstep. A start-up that ran late must not spend the deadline of the waits in the check
// (issue 44: a 2 s --mpi-timeout meant for a stalled collective once expired inside MPI_Init).
enum class Phase { kStartUp, kCheck };

struct Deadlines {
  double startup = 60, check = 60;  ///< seconds: --mpi-start-timeout, --mpi-timeout

  /// The root waits a little less than the others, so it is the one that reports.
  double Limit(Phase phase, int rank) const {
    const double base = phase == Phase::kStartUp ? startup : check;
    return rank == 0 ? base : base + 2;
  }
  static const char* Flag(Phase phase) { return phase == Phase::kStartUp ? "--mpi-start-timeout" : "--mpi-timeout"; }
};

// "rank 0 of 8 waited 60 s for X: a rank stopped answering or died; the check did not finish ...".
std::string TimeoutMessage(int rank, int size, double limit, Phase phase, const std::string& what,
                           const std::string& who, bool finished) {
  return fmt::format("easyplan: error: rank {} of {} waited {} s for {}: {}; {} ({} sets the wait)\n", rank, size,
                     limit, what, who.empty() ? "a rank stopped answering or died" : who,
                     finished ? "the check finished and its output above stands, but the job did not end cleanly"
                              : "the check did not finish",
                     Deadlines::Flag(phase));
}

// The blocking MPI calls (MPI_Init, MPI_Comm_split, MPI_Finalize) cannot be polled, so a thread keeps
// their deadline: if the call has not returned when it passes, the thread prints what it waited for and
// ends the process with _exit(3). It cannot call MPI_Abort: under MPI_THREAD_SINGLE only the main
// thread may call MPI (MPI_Init_thread(3)), and before MPI_Init returns there is nothing to abort. mpirun
// then ends the job: "By default, the job will abort when any process terminates with non-zero status"
// (mpirun(1), "Exit status"), and its exit code is this process's 3. The others' own deadlines end
// them too if mpirun is told not to.
//
// On the root it also watches the ranks on its host between the start and the end of the check: when
// one's process ends, the root says which and exits 3 at once. mpirun stops the job when a rank dies,
// and output the survivors write after its SIGTERM is often lost (Open MPI 4.1 drops it while tearing
// the job down), so the root must speak first.
class Watchdog {
 public:
  Watchdog(int rank, int size, Deadlines deadlines)
      : rank_(rank), size_(size), deadlines_(deadlines), thread_([this] { Loop(); }) {}

  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }

  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// Runs a blocking MPI call under the phase's deadline; returns its code.
  int Run(const std::string& what, Phase phase, const std::function<int()>& call) {
    Arm(what, phase);
    const int rc = call();
    Arm("", phase);
    return rc;
  }

  /// From now on the output is the check's: a stall is after its result.
  void MarkFinished() {
    std::lock_guard<std::mutex> lock(mutex_);
    finished_ = true;
  }

  /// Every rank's process, for the messages, and on the root (while `watch`) the ended-rank check.
  void SetPeers(std::vector<PeerProcess> peers, bool watch) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      peers_ = std::move(peers);
      watch_ = watch;
    }
    wake_.notify_all();
  }

  void StopWatching() {
    std::lock_guard<std::mutex> lock(mutex_);
    watch_ = false;
  }

  /// Which ranks this rank can tell stopped answering; empty when none.
  std::string Diagnose() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return DiagnoseLocked();
  }

  /// This rank's limit for a wait of `phase`.
  double limit(Phase phase) const { return deadlines_.Limit(phase, rank_); }

 private:
  using Clock = std::chrono::steady_clock;
  // Open MPI 4.1's mpirun signals the survivors about a second after a rank dies (its odls component
  // sends SIGCONT, waits odls_base_sigkill_timeout, 1 s by default, then SIGTERM): 50 ms is well
  // inside that, at a few hundred /proc reads a second at most.
  static constexpr std::chrono::milliseconds kPeerPoll{50};

  void Arm(const std::string& what, Phase phase) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      what_ = what;
      phase_ = phase;
      deadline_ =
          Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit(phase)));
    }
    wake_.notify_all();
  }

  // Before the ranks have reported their processes (MPI_Init), this rank's siblings stand in for them.
  std::string DiagnoseLocked() const {
    return DiagnosePeers(peers_.empty() ? SiblingRanks(rank_, size_) : peers_, rank_, /*ended_only=*/false);
  }

  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_) {
      if (!what_.empty() && Clock::now() >= deadline_) {
        End(TimeoutMessage(rank_, size_, limit(phase_), phase_, what_, DiagnoseLocked(), finished_));
      }
      if (watch_) {
        const std::string ended = DiagnosePeers(peers_, rank_, /*ended_only=*/true);
        if (!ended.empty()) {
          End(fmt::format("easyplan: error: rank {} of {}: {}; the check did not finish\n", rank_, size_, ended));
        }
      }
      const Clock::time_point forever = Clock::now() + std::chrono::hours(24);
      Clock::time_point wake = what_.empty() ? forever : deadline_;
      if (watch_) wake = std::min(wake, Clock::now() + kPeerPoll);
      wake_.wait_until(lock, wake);
    }
  }

  // write(2), not stdio: the main thread may hold a stream's lock. The result, if any, was flushed
  // before MPI_Finalize.
  [[noreturn]] static void End(const std::string& message) {
    WriteAll(message.data(), message.size());
    ::_exit(3);
  }

  const int rank_, size_;
  const Deadlines deadlines_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::string what_;  ///< the blocking call under way; empty when none
  Phase phase_ = Phase::kStartUp;
  Clock::time_point deadline_;
  std::vector<PeerProcess> peers_;
  bool watch_ = false, finished_ = false, stop_ = false;
  std::thread thread_;  ///< last: starts once the rest is set
};

// ---- The test-only hooks ----
// EASYPLAN_TEST_MPI_STOP (docs/CHECK.md, for tests/cli/mpi_check_test.cc only): the last rank stops
// itself with SIGSTOP just before a blocking call, as a frozen process would, for longer than any
// rank's deadline. (A rank frozen before MPI_Init needs no hook: the test stops the process before
// easyplan starts.)
enum class StopAt { kNone, kSplit, kFinalize };

StatusOr<StopAt> ReadStopAt() {
  const char* value = std::getenv("EASYPLAN_TEST_MPI_STOP");
  if (value == nullptr || *value == '\0') return StopAt::kNone;
  const std::string text = value;
  if (text == "split") return StopAt::kSplit;
  if (text == "finalize") return StopAt::kFinalize;
  return Status::BadInput({}, fmt::format("EASYPLAN_TEST_MPI_STOP is '{}', expected split or finalize (a test "
                                          "hook: it stops the last rank)",
                                          text));
}

// EASYPLAN_TEST_MPI_SLOW_START=SECONDS (docs/CHECK.md, tests only): the last rank sleeps that long
// before MPI_Init and again before the check starts, as a rank of a loaded machine starts late. It
// makes the start-up of a busy machine reproducible: the flake of issue 44 (item 14), where a 2 s
// deadline meant for a stalled collective expired inside MPI_Init.
constexpr double kMaxSlowStart = 60;

StatusOr<double> ReadSlowStart() {
  const char* value = std::getenv("EASYPLAN_TEST_MPI_SLOW_START");
  if (value == nullptr || *value == '\0') return 0.0;
  const std::string text = value;
  double seconds = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (ec != std::errc() || end != text.data() + text.size() || !(seconds >= 0 && seconds <= kMaxSlowStart)) {
    return Status::BadInput({}, fmt::format("EASYPLAN_TEST_MPI_SLOW_START is '{}', expected seconds from 0 to {} (a "
                                            "test hook: the last rank starts that late)",
                                            text, kMaxSlowStart));
  }
  return seconds;
}

// What the hooks ask of this process.
struct TestHooks {
  StopAt stop_at = StopAt::kNone;
  double slow_start = 0;  ///< seconds the last rank sleeps before MPI_Init and before the check starts
};

void MaybeStartSlowly(const TestHooks& hooks, int rank, int size) {
  if (hooks.slow_start > 0 && rank == size - 1) {
    std::this_thread::sleep_for(std::chrono::duration<double>(hooks.slow_start));
  }
}

// The stop ends by itself `resume_after` seconds later: a one-shot timer sends the process SIGCONT,
// which resumes a stopped process whoever sends it (signal(7), "SIGCONT"). Ending the job is the
// launcher's work (Open MPI's mpirun sends SIGCONT, SIGTERM, then SIGKILL), but a launcher that cannot
// signal the stopped rank would otherwise wait for it for ever, and the test with it: a CI run saw
// mpirun still waiting 30 s after rank 0 had reported. Resumed, the rank meets its own deadline.
void MaybeStop(StopAt configured, StopAt here, int rank, int size, double resume_after) {
  if (configured != here || rank != size - 1) return;
  sigevent event{};
  event.sigev_notify = SIGEV_SIGNAL;
  event.sigev_signo = SIGCONT;
  timer_t timer{};
  if (::timer_create(CLOCK_MONOTONIC, &event, &timer) == 0) {
    itimerspec when{};
    when.it_value.tv_sec = static_cast<time_t>(resume_after);
    ::timer_settime(timer, 0, &when, nullptr);
  }
  ::raise(SIGSTOP);
}

// How long the test hook keeps the last rank stopped: past its own deadline (a non-root rank's is the
// longest), and past mpirun's teardown after rank 0 reports, which takes about 2 s (the 1 s waits
// before SIGTERM and before SIGKILL, odls_base_sigkill_timeout).
double StopSeconds(const Watchdog& watchdog) { return watchdog.limit(Phase::kCheck) + 3; }

// ---- Waiting ----

std::string ErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<size_t>(length));
}

class Waiter {
 public:
  Waiter(int rank, int size, const Watchdog& watchdog) : rank_(rank), size_(size), watchdog_(watchdog) {}

  /// Starts a non-blocking MPI call (`start` returns its code) and polls its request until it
  /// completes; an error, or the phase's deadline passing, ends the job (exit 3).
  template <typename Start>
  void Await(const std::string& what, Start start, Phase phase = Phase::kCheck) const {
    MPI_Request request;
    Check(start(&request), what);
    std::vector<MPI_Request> one{request};
    WaitAll(one, what, phase);
  }

  /// Polls every request until all complete, under one deadline; past it, ends the job (exit 3).
  void WaitAll(std::vector<MPI_Request>& requests, const std::string& what, Phase phase = Phase::kCheck) const {
    if (requests.empty()) return;
    const double limit = watchdog_.limit(phase);
    const double deadline = MPI_Wtime() + limit;
    for (int polls = 0;; ++polls) {
      int done = 0;
      const int rc = MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
      if (rc != MPI_SUCCESS) Fail(fmt::format("MPI failed in {}: {}", what, ErrorText(rc)));
      if (done) return;
      if (MPI_Wtime() > deadline) Abort(TimeoutMessage(rank_, size_, limit, phase, what, watchdog_.Diagnose(), false));
      if (polls > 200) {  // yield the core: ranks are often oversubscribed
        const timespec pause{0, 50'000};
        ::nanosleep(&pause, nullptr);
      }
    }
  }

  /// An MPI call's return code: anything but success ends the job.
  void Check(int rc, const std::string& what) const {
    if (rc != MPI_SUCCESS) Fail(fmt::format("MPI failed to start {}: {}", what, ErrorText(rc)));
  }

  [[noreturn]] void Fail(const std::string& message) const {
    Abort(fmt::format("easyplan: error: rank {} of {} {}\n", rank_, size_, message));
  }

 private:
  // Prints first: MPI_Abort does not return, and mpirun prints its own banner after.
  [[noreturn]] static void Abort(const std::string& line) {
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    ::_exit(3);
  }

  int rank_, size_;
  const Watchdog& watchdog_;
};

// ---- The transport ----

// The ranks whose devices share a group over a set of axes.
struct AxisComm {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<int> world;  ///< world rank of each comm rank (ascending: the split's key is the world rank)
  int me = 0;              ///< this rank's comm rank
};

// One collective group as this rank sees it.
struct GroupView {
  std::vector<int64_t> members;         ///< device ids, group order
  std::vector<std::vector<size_t>> by;  ///< per comm rank: positions in `members` it runs, in group order
  const AxisComm* comm = nullptr;
  /// The positions this rank runs.
  const std::vector<size_t>& mine() const { return by[static_cast<size_t>(comm->me)]; }
};

int ToInt(int64_t count, const std::string& what, const Waiter& waiter) {
  if (count < 0 || count > INT_MAX) waiter.Fail(fmt::format("{}: {} elements do not fit one MPI call", what, count));
  return static_cast<int>(count);
}

// What the transports of one mesh share (the whole mesh's and each pipeline stage's): every rank's
// devices and one communicator per set of axes.
class MpiWorld {
 public:
  MpiWorld(const Mesh& mesh, std::vector<RankBlock> blocks, int rank, const Waiter& waiter, Watchdog& watchdog,
           const TestHooks& hooks)
      : mesh_(mesh), blocks_(std::move(blocks)), rank_(rank) {
    MaybeStartSlowly(hooks, rank_, static_cast<int>(blocks_.size()));
    // The last wait of the start-up: ranks reach it after reading the config, which a loaded machine
    // slows; every later wait is under --mpi-timeout.
    waiter.Await(
        "every rank to start the check", [&](MPI_Request* request) { return MPI_Ibarrier(MPI_COMM_WORLD, request); },
        Phase::kStartUp);
    // One communicator per set of axes larger than 1 (a group's membership ignores size-1 axes): the
    // ranks equal on every other axis. Every rank splits in the same order.
    MaybeStop(hooks.stop_at, StopAt::kSplit, rank_, static_cast<int>(blocks_.size()), StopSeconds(watchdog));
    const int axes = mesh.rank();
    for (unsigned mask = 1; mask < (1u << axes); ++mask) {
      if (Reduced(mask) != mask) continue;
      AxisComm& c = comms_[mask];
      std::vector<int64_t> colors;
      for (size_t r = 0; r < blocks_.size(); ++r) colors.push_back(Color(blocks_[r], mask));
      for (size_t r = 0; r < blocks_.size(); ++r) {
        if (colors[r] == colors[static_cast<size_t>(rank_)]) c.world.push_back(static_cast<int>(r));
      }
      c.me = static_cast<int>(std::find(c.world.begin(), c.world.end(), rank_) - c.world.begin());
      // MPI-3 has no non-blocking split (MPI_Comm_split(3) blocks until every rank of MPI_COMM_WORLD
      // calls it), so the watchdog keeps its deadline.
      const std::string what = fmt::format("MPI_Comm_split (the communicator over ({}))", AxisNames(mesh, mask));
      waiter.Check(watchdog.Run(what, Phase::kCheck,
                                [&] {
                                  return MPI_Comm_split(MPI_COMM_WORLD,
                                                        static_cast<int>(colors[static_cast<size_t>(rank_)]), rank_,
                                                        &c.comm);
                                }),
                   what);
      MPI_Comm_set_errhandler(c.comm, MPI_ERRORS_RETURN);
    }
  }

  ~MpiWorld() {
    for (auto& [mask, c] : comms_) MPI_Comm_free(&c.comm);
  }

  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;

  const Mesh& mesh() const { return mesh_; }
  const std::vector<RankBlock>& blocks() const { return blocks_; }
  int rank() const { return rank_; }
  /// The rank that runs device `device` of the whole mesh.
  int OwnerOf(int64_t device) const { return static_cast<int>(device / blocks_[0].count); }
  /// The communicator over the whole mesh's axes `mask` (each larger than 1).
  const AxisComm& Comm(unsigned mask) const {
    auto it = comms_.find(mask);
    EP_CHECK(it != comms_.end(), "a collective over axes of size 1 only");
    return it->second;
  }

 private:
  static std::string AxisNames(const Mesh& mesh, unsigned mask) {
    std::vector<std::string> names;
    for (int a = 0; a < mesh.rank(); ++a) {
      if (mask >> a & 1u) names.push_back(mesh.axis_names[static_cast<size_t>(a)]);
    }
    return fmt::format("{}", fmt::join(names, ", "));
  }

  // The axes of `mask` larger than 1.
  unsigned Reduced(unsigned mask) const {
    unsigned out = 0;
    for (int a = 0; a < mesh_.rank(); ++a) {
      if ((mask >> a & 1u) && mesh_.shape[static_cast<size_t>(a)] > 1) out |= 1u << a;
    }
    return out;
  }

  // A rank's block coordinates on the axes outside `mask`, as one number: equal for the ranks that
  // share groups over `mask`.
  int64_t Color(const RankBlock& b, unsigned mask) const {
    int64_t color = 0;
    for (int a = 0; a < mesh_.rank(); ++a) {
      if (mask >> a & 1u) continue;
      const size_t k = static_cast<size_t>(a);
      color = color * (mesh_.shape[k] / b.axis_n[k]) + b.axis_lo[k] / b.axis_n[k];
    }
    return color;
  }

  Mesh mesh_;
  std::vector<RankBlock> blocks_;  ///< every rank's devices
  int rank_;
  std::map<unsigned, AxisComm> comms_;
};

class MpiTransport final : public Transport {
 public:
  /// The whole mesh's transport (`pp_axis` -1), or pipeline stage `stage`'s: `geo` is then the stage's
  /// mesh with this rank's devices of it (kernels/stage_mesh.h).
  MpiTransport(std::shared_ptr<const MpiWorld> world, MeshGeometry geo, int pp_axis, int64_t stage,
               const Waiter& waiter, MpiOptions::Fault fault)
      : world_(std::move(world)),
        geo_(std::move(geo)),
        pp_axis_(pp_axis),
        stage_(stage),
        rank_(world_->rank()),
        waiter_(waiter),
        fault_(fault) {}

  const MeshGeometry& geo() const override { return geo_; }
  bool root() const override { return rank_ == 0; }

  int64_t AllGather(std::vector<HostTensor>& local, const std::vector<int>& axes, int dim,
                    const std::string& what) override {
    MaybeFault();
    const int64_t block = local[0].size();
    for (const GroupView& g : Groups(axes)) {
      const std::vector<size_t>& mine = g.mine();
      std::vector<double> send;
      for (size_t p : mine) Append(send, local[Local(g.members[p])]);
      std::vector<double> recv(send.size() * g.by.size());
      const int count = ToInt(static_cast<int64_t>(send.size()), what, waiter_);
      waiter_.Await(what, [&](MPI_Request* request) {
        return MPI_Iallgather(send.data(), count, MPI_DOUBLE, recv.data(), count, MPI_DOUBLE, g.comm->comm, request);
      });
      // recv holds each comm rank's members in its order; put every block at its group position.
      const Dims shape = local[Local(g.members[mine[0]])].shape;
      std::vector<HostTensor> parts(g.members.size());
      for (size_t q = 0; q < g.by.size(); ++q) {
        for (size_t i = 0; i < g.by[q].size(); ++i) {
          parts[g.by[q][i]] = Take(recv, (q * g.by[q].size() + i) * static_cast<size_t>(block), shape);
        }
      }
      std::vector<const HostTensor*> ordered;
      for (const HostTensor& part : parts) ordered.push_back(&part);
      const HostTensor full = Concat(ordered, dim);
      for (size_t p : mine) local[Local(g.members[p])] = full;
    }
    return block;
  }

  int64_t AllReduce(std::vector<HostTensor>& local, const std::vector<int>& axes, ReduceOp op,
                    const std::string& what) override {
    MaybeFault();
    const int64_t block = local[0].size();
    for (const GroupView& g : Groups(axes)) {
      const std::vector<size_t>& mine = g.mine();
      const HostTensor acc = LocalSum(local, g, op);
      HostTensor out(acc.shape);
      const int count = ToInt(acc.size(), what, waiter_);
      waiter_.Await(what, [&](MPI_Request* request) {
        return MPI_Iallreduce(acc.data.data(), out.data.data(), count, MPI_DOUBLE,
                              op == ReduceOp::kSum ? MPI_SUM : MPI_MAX, g.comm->comm, request);
      });
      for (size_t p : mine) local[Local(g.members[p])] = out;
    }
    return block;
  }

  int64_t ReduceScatter(std::vector<HostTensor>& local, const std::vector<int>& axes, int dim,
                        const std::string& what) override {
    MaybeFault();
    const int64_t block = local[0].size();
    const size_t d = static_cast<size_t>(dim);
    for (const GroupView& g : Groups(axes)) {
      const std::vector<size_t>& mine = g.mine();
      const HostTensor acc = LocalSum(local, g, ReduceOp::kSum);
      const int64_t length = acc.shape[d] / static_cast<int64_t>(g.members.size());
      auto slice = [&](size_t position) { return SliceDim(acc, dim, static_cast<int64_t>(position) * length, length); };
      // Comm rank q's share is the slices of its members, in its order.
      std::vector<double> send;
      for (const std::vector<size_t>& positions : g.by) {
        for (size_t p : positions) Append(send, slice(p));
      }
      const size_t piece = send.size() / g.members.size();
      std::vector<double> recv(piece * mine.size());
      waiter_.Await(what, [&](MPI_Request* request) {
        return MPI_Ireduce_scatter_block(send.data(), recv.data(),
                                         ToInt(static_cast<int64_t>(recv.size()), what, waiter_), MPI_DOUBLE, MPI_SUM,
                                         g.comm->comm, request);
      });
      Dims shape = acc.shape;
      shape[d] = length;
      for (size_t i = 0; i < mine.size(); ++i) local[Local(g.members[mine[i]])] = Take(recv, i * piece, shape);
    }
    return block;
  }

  int64_t AllToAll(std::vector<HostTensor>& local, const std::vector<int>& axes, int from, int to,
                   const std::string& what) override {
    MaybeFault();
    const int64_t block = local[0].size();
    const size_t t = static_cast<size_t>(to);
    for (const GroupView& g : Groups(axes)) {
      const std::vector<size_t>& mine = g.mine();
      const Dims part_shape = local[Local(g.members[mine[0]])].shape;
      const int64_t length = part_shape[t] / static_cast<int64_t>(g.members.size());
      // Member j sends member i (position pi) block pi of `to` of its part.
      auto piece_of = [&](size_t j_position, size_t i_position) {
        return SliceDim(local[Local(g.members[j_position])], to, static_cast<int64_t>(i_position) * length, length);
      };
      std::vector<double> send;
      for (const std::vector<size_t>& theirs : g.by) {
        for (size_t j : mine) {
          for (size_t i : theirs) Append(send, piece_of(j, i));
        }
      }
      std::vector<double> recv(send.size());
      const int count = ToInt(static_cast<int64_t>(send.size() / g.by.size()), what, waiter_);
      waiter_.Await(what, [&](MPI_Request* request) {
        return MPI_Ialltoall(send.data(), count, MPI_DOUBLE, recv.data(), count, MPI_DOUBLE, g.comm->comm, request);
      });
      // From comm rank q: for each of its members j, for each of mine i, one piece.
      Dims piece_shape = part_shape;
      piece_shape[t] = length;
      const size_t piece = static_cast<size_t>(NumElements(piece_shape));
      std::vector<std::vector<HostTensor>> received(mine.size(), std::vector<HostTensor>(g.members.size()));
      size_t offset = 0;
      for (const std::vector<size_t>& theirs : g.by) {
        for (size_t j : theirs) {
          for (size_t i = 0; i < mine.size(); ++i, offset += piece) received[i][j] = Take(recv, offset, piece_shape);
        }
      }
      for (size_t i = 0; i < mine.size(); ++i) {
        std::vector<const HostTensor*> ordered;
        for (const HostTensor& p : received[i]) ordered.push_back(&p);
        local[Local(g.members[mine[i]])] = Concat(ordered, from);
      }
    }
    return block;
  }

  std::unique_ptr<Transport> Stage(int pp_axis, int64_t stage) override {
    EP_CHECK(pp_axis_ < 0, "a stage of the whole mesh");
    const StageRange mine = StageDevicesIn(world_->mesh(), pp_axis, stage, geo_.first_local(), geo_.local_devices());
    if (mine.count == 0) return nullptr;
    return std::make_unique<MpiTransport>(world_,
                                          MeshGeometry(StageMesh(world_->mesh(), pp_axis), mine.first, mine.count),
                                          pp_axis, stage, waiter_, fault_);
  }

  // Point to point on MPI_COMM_WORLD: each device of `to` receives from the rank running its counterpart
  // on `from` (a copy when that is this rank), tagged with the device's number in the stage. Boundaries
  // between the same two ranks follow one another in program order, and MPI keeps the order of messages
  // between two ranks with one tag (MPI-3.1 section 3.5, "Order"), so each receive meets its own send.
  int64_t SendRecv(const std::vector<HostTensor>& sent, std::vector<HostTensor>& received, const Dims& shape,
                   int pp_axis, int64_t from, int64_t to, const std::string& what) override {
    EP_CHECK(pp_axis_ < 0, "a stage boundary on the whole mesh");
    MaybeFault();
    const Mesh& mesh = world_->mesh();
    const StageRange source = StageDevicesIn(mesh, pp_axis, from, geo_.first_local(), geo_.local_devices());
    const StageRange target = StageDevicesIn(mesh, pp_axis, to, geo_.first_local(), geo_.local_devices());
    EP_CHECK(static_cast<int64_t>(sent.size()) == source.count, "a block per device of the sending stage");
    const int count = ToInt(NumElements(shape), what, waiter_);
    received.assign(static_cast<size_t>(target.count), HostTensor(shape));
    std::vector<MPI_Request> requests;
    for (int64_t i = 0; i < target.count; ++i) {
      const int64_t id = target.first + i;
      const int owner = world_->OwnerOf(DeviceOfStage(mesh, pp_axis, from, id));
      HostTensor& into = received[static_cast<size_t>(i)];
      if (owner == rank_) {
        EP_CHECK(source.Contains(id), "a device's counterpart runs on its rank");
        into = sent[static_cast<size_t>(id - source.first)];
        continue;
      }
      requests.emplace_back();
      waiter_.Check(
          MPI_Irecv(into.data.data(), count, MPI_DOUBLE, owner, static_cast<int>(id), MPI_COMM_WORLD, &requests.back()),
          what);
    }
    for (int64_t i = 0; i < source.count; ++i) {
      const int64_t id = source.first + i;
      const int owner = world_->OwnerOf(DeviceOfStage(mesh, pp_axis, to, id));
      if (owner == rank_) continue;
      EP_CHECK(sent[static_cast<size_t>(i)].shape == shape, "a stage boundary sends equal-shaped blocks");
      requests.emplace_back();
      waiter_.Check(MPI_Isend(sent[static_cast<size_t>(i)].data.data(), count, MPI_DOUBLE, owner, static_cast<int>(id),
                              MPI_COMM_WORLD, &requests.back()),
                    what);
    }
    waiter_.WaitAll(requests, what);
    return count;
  }

  std::vector<HostTensor> GatherBlocks(const std::vector<HostTensor>& local) override {
    EP_CHECK(pp_axis_ < 0, "a probe of the whole mesh");
    const std::vector<int64_t> sizes = GatherValues({local[0].size()});
    std::vector<double> send;
    for (const HostTensor& b : local) {
      EP_CHECK(b.shape == local[0].shape, "a probe gathers equal-shaped blocks");
      Append(send, b);
    }
    for (int64_t s : sizes) EP_CHECK(s == local[0].size(), "a probe gathers equal-shaped blocks");
    std::vector<double> recv(rank_ == 0 ? send.size() * world_->blocks().size() : 0);
    const std::string what = "the root to gather every device's output (a probe)";
    const int count = ToInt(static_cast<int64_t>(send.size()), what, waiter_);
    waiter_.Await(what, [&](MPI_Request* request) {
      return MPI_Igather(send.data(), count, MPI_DOUBLE, recv.data(), count, MPI_DOUBLE, 0, MPI_COMM_WORLD, request);
    });
    std::vector<HostTensor> all;
    for (size_t d = 0; rank_ == 0 && d < static_cast<size_t>(geo_.devices()); ++d) {
      all.push_back(Take(recv, d * static_cast<size_t>(local[0].size()), local[0].shape));
    }
    return all;
  }

  std::vector<int64_t> GatherValues(const std::vector<int64_t>& local) override {
    // A stage's processes are not every process, and the root may run none of them: each keeps its own
    // devices' figures (the root reports the pipeline from its in-process rerun, kernels/pipeline_check.h).
    if (pp_axis_ >= 0) return local;
    std::vector<int64_t> all(rank_ == 0 ? local.size() * world_->blocks().size() : 0);
    const std::string what = "the root to gather every device's figures (a probe)";
    waiter_.Await(what, [&](MPI_Request* request) {
      return MPI_Igather(local.data(), ToInt(static_cast<int64_t>(local.size()), what, waiter_), MPI_INT64_T,
                         all.data(), static_cast<int>(local.size()), MPI_INT64_T, 0, MPI_COMM_WORLD, request);
    });
    return all;
  }

 private:
  size_t Local(int64_t device) const { return static_cast<size_t>(device - geo_.first_local()); }

  // The groups over `axes` that hold a device of this rank, with who runs which member.
  // A stage's groups run on the whole mesh's communicators: no group spans stages (no collective runs
  // over pp), and every rank's block spans the same stages, so the ranks sharing a stage's group over
  // some axes are those of the whole mesh's communicator over them.
  std::vector<GroupView> Groups(const std::vector<int>& axes) const {
    unsigned mask = 0;
    for (int a : axes) {
      if (geo_.AxisSize(a) > 1) mask |= 1u << (pp_axis_ >= 0 && a >= pp_axis_ ? a + 1 : a);
    }
    const AxisComm& comm = world_->Comm(mask);
    std::vector<GroupView> views;
    for (std::vector<int64_t>& members : geo_.Groups(axes)) {
      if (std::none_of(members.begin(), members.end(), [&](int64_t d) { return geo_.Owns(d); })) continue;
      GroupView v{std::move(members), std::vector<std::vector<size_t>>(comm.world.size()), &comm};
      for (size_t p = 0; p < v.members.size(); ++p) {
        const int64_t device =
            pp_axis_ < 0 ? v.members[p] : DeviceOfStage(world_->mesh(), pp_axis_, stage_, v.members[p]);
        const int owner = world_->OwnerOf(device);
        const auto q = std::find(comm.world.begin(), comm.world.end(), owner) - comm.world.begin();
        EP_CHECK(static_cast<size_t>(q) < comm.world.size(), "a group member outside its communicator");
        v.by[static_cast<size_t>(q)].push_back(p);
      }
      views.push_back(std::move(v));
    }
    return views;
  }

  HostTensor LocalSum(const std::vector<HostTensor>& local, const GroupView& g, ReduceOp op) const {
    const std::vector<size_t>& mine = g.mine();
    HostTensor acc = local[Local(g.members[mine[0]])];
    for (size_t i = 1; i < mine.size(); ++i) {
      const HostTensor& x = local[Local(g.members[mine[i]])];
      for (size_t e = 0; e < acc.data.size(); ++e) {
        acc.data[e] = op == ReduceOp::kSum ? acc.data[e] + x.data[e] : std::max(acc.data[e], x.data[e]);
      }
    }
    return acc;
  }

  static void Append(std::vector<double>& out, const HostTensor& t) {
    out.insert(out.end(), t.data.begin(), t.data.end());
  }

  static HostTensor Take(const std::vector<double>& buffer, size_t offset, const Dims& shape) {
    HostTensor t(shape);
    std::copy_n(buffer.begin() + static_cast<std::ptrdiff_t>(offset), t.data.size(), t.data.begin());
    return t;
  }

  // The fault tests' faults, on the last rank at its first collective.
  void MaybeFault() {
    if (fault_ == MpiOptions::Fault::kNone || rank_ != static_cast<int>(world_->blocks().size()) - 1) return;
    if (fault_ == MpiOptions::Fault::kCrash) ::raise(SIGSEGV);
    if (fault_ == MpiOptions::Fault::kKill) ::raise(SIGKILL);
    if (fault_ == MpiOptions::Fault::kTerm) ::kill(::getpid(), SIGTERM);  // SI_USER, as from kill(1)
    while (true) ::pause();  // kStall: stops answering until mpirun stops it
  }

  std::shared_ptr<const MpiWorld> world_;
  MeshGeometry geo_;
  int pp_axis_;    ///< -1: the whole mesh; else geo_ is stage `stage_` of this pp axis
  int64_t stage_;  ///< the stage, when pp_axis_ >= 0
  int rank_;
  const Waiter& waiter_;
  MpiOptions::Fault fault_;
};

class MpiEngine final : public Engine {
 public:
  MpiEngine(MpiLaunch launch, MpiOptions options, std::unique_ptr<Watchdog> watchdog, TestHooks hooks)
      : launch_(std::move(launch)),
        options_(options),
        watchdog_(std::move(watchdog)),
        waiter_(launch_.rank, launch_.size, *watchdog_),
        hooks_(hooks) {
    ReportProcesses();
  }

  ~MpiEngine() override {
    // Every rank passes here before any exits, so the root's report is written first. The root stops
    // watching for ended ranks between two barriers: after the first, a rank may exit at any time, but
    // not before the root has passed it.
    waiter_.Await("every rank to finish", [&](MPI_Request* request) { return MPI_Ibarrier(MPI_COMM_WORLD, request); });
    watchdog_->StopWatching();
    watchdog_->MarkFinished();
    waiter_.Await("every rank to finish (the second barrier)",
                  [&](MPI_Request* request) { return MPI_Ibarrier(MPI_COMM_WORLD, request); });
    RestoreHandlers();
    std::fflush(nullptr);  // the result stands whatever MPI_Finalize does
    MaybeStop(hooks_.stop_at, StopAt::kFinalize, launch_.rank, launch_.size, StopSeconds(*watchdog_));
    watchdog_->Run("MPI_Finalize", Phase::kCheck, [] { return MPI_Finalize(); });
  }

  std::string_view name() const override { return "mpi"; }
  bool distributed() const override { return true; }
  int processes() const override { return launch_.size; }
  bool root() const override { return launch_.rank == 0; }

  StatusOr<std::unique_ptr<Transport>> Connect(const Mesh& mesh) override {
    std::vector<RankBlock> blocks;
    for (int r = 0; r < launch_.size; ++r) {
      EP_ASSIGN_OR_RETURN(RankBlock b, RankDevices(mesh, r, launch_.size));
      blocks.push_back(std::move(b));
    }
    const RankBlock mine = blocks[static_cast<size_t>(launch_.rank)];
    auto world = std::make_shared<const MpiWorld>(mesh, std::move(blocks), launch_.rank, waiter_, *watchdog_, hooks_);
    return std::unique_ptr<Transport>(std::make_unique<MpiTransport>(
        std::move(world), MeshGeometry(mesh, mine.first, mine.count), -1, -1, waiter_, options_.fault));
  }

  int AgreeExitCode(int root_code) override {
    int code = root_code;
    waiter_.Await("the root's exit code",
                  [&](MPI_Request* request) { return MPI_Ibcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD, request); });
    return launch_.rank == 0 ? code : 0;  // Engine::AgreeExitCode: only the root's exit ends the job
  }

 private:
  // Every rank's host and process id to every rank, which names those on its host that stop answering
  // (Watchdog); the root also watches them end. Every rank, not only the root: when the root is the one
  // stopped, the rank that reports must be able to name it.
  void ReportProcesses() {
    const int64_t mine[2] = {static_cast<int64_t>(HostKey()), static_cast<int64_t>(::getpid())};
    std::vector<int64_t> all(2 * static_cast<size_t>(launch_.size));
    waiter_.Await(
        "every rank to report its process",
        [&](MPI_Request* request) {
          return MPI_Iallgather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, MPI_COMM_WORLD, request);
        },
        Phase::kStartUp);
    std::vector<PeerProcess> peers;
    for (size_t r = 0; r < all.size(); r += 2) peers.push_back({static_cast<uint64_t>(all[r]), all[r + 1]});
    watchdog_->SetPeers(std::move(peers), /*watch=*/launch_.rank == 0);
  }

  MpiLaunch launch_;
  MpiOptions options_;
  std::unique_ptr<Watchdog> watchdog_;
  Waiter waiter_;
  TestHooks hooks_;
};

}  // namespace

bool MpiAvailable() { return true; }

StatusOr<std::unique_ptr<Engine>> StartMpiEngine(const MpiOptions& options) {
  EP_ASSIGN_OR_RETURN(const std::optional<MpiLaunch> launch,
                      ReadMpiLaunch([](const std::string& name) -> std::optional<std::string> {
                        const char* value = std::getenv(name.c_str());
                        return value ? std::optional<std::string>(value) : std::nullopt;
                      }));
  if (!launch) {
    return Status::BadInput(
        {}, "--engine mpi runs under mpirun, which starts one easyplan process per rank",
        {"mpirun -np 8 easyplan check CONFIG --mesh fsdp=2,tp=4 --engine mpi",
         "as root, Open MPI also needs OMPI_ALLOW_RUN_AS_ROOT=1 and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
         "(or mpirun's option to allow it; docs/CHECK.md)"});
  }
  TestHooks hooks;
  EP_ASSIGN_OR_RETURN(hooks.stop_at, ReadStopAt());
  EP_ASSIGN_OR_RETURN(hooks.slow_start, ReadSlowStart());
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return Status::BadInput({}, "--engine mpi: MPI starts once per process");
  // MPI_Init waits for every rank (Open MPI exchanges their addresses), so it runs under the start-up
  // deadline.
  // The signal handlers go in first, so a rank mpirun stops during start-up says so; MPI_Init may
  // install its own for crashes, so they go in again after.
  InstallHandlers(launch->rank, launch->size);
  auto watchdog = std::make_unique<Watchdog>(launch->rank, launch->size,
                                             Deadlines{options.startup_timeout_seconds, options.timeout_seconds});
  MaybeStartSlowly(hooks, launch->rank, launch->size);
  if (watchdog->Run("MPI_Init", Phase::kStartUp, [] { return MPI_Init(nullptr, nullptr); }) != MPI_SUCCESS) {
    return Status::Internal(
        fmt::format("MPI_Init failed under {} (rank {} of {})", launch->launcher, launch->rank, launch->size));
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != launch->rank || size != launch->size) {
    // Printed first: MPI_Abort ends the job without returning, and Open MPI's banner says only that.
    std::fprintf(stderr,
                 "easyplan: internal error: MPI says rank %d of %d, the launcher (%s) rank %d of %d; the check did "
                 "not start\n",
                 rank, size, launch->launcher.c_str(), launch->rank, launch->size);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    ::_exit(3);
  }
  InstallHandlers(rank, size);
  return std::unique_ptr<Engine>(std::make_unique<MpiEngine>(*launch, options, std::move(watchdog), hooks));
}

}  // namespace easyplan::kernels
