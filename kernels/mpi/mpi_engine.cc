// The MPI engine (kernels/mpi_engine.h): one process per rank, MPI's non-blocking collectives on one
// communicator per set of mesh axes, every wait polled against a deadline.
#include "kernels/mpi_engine.h"

#include <fmt/format.h>
#include <mpi.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "kernels/mpi_launch.h"

namespace easyplan::kernels {
namespace {

// ---- Fatal signals ----
// What the handlers write: prepared when the engine starts, written with write(2), the only output
// a signal handler may make. Signal dispositions are process-wide, and so are these.
char crash_prefix[160];  // "easyplan: error: rank 3 of 8 crashed (signal "
char stopped_message[400];
size_t crash_prefix_length = 0, stopped_message_length = 0;

void WriteAll(const char* text, size_t length) {
  while (length > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, length);
    if (n <= 0) return;
    text += n;
    length -= static_cast<size_t>(n);
  }
}

void OnCrash(int signal) {
  WriteAll(crash_prefix, crash_prefix_length);
  char digits[8];
  size_t n = 0;
  for (int s = signal; n < sizeof digits && (s > 0 || n == 0); s /= 10) digits[n++] = static_cast<char>('0' + s % 10);
  while (n > 0) WriteAll(&digits[--n], 1);
  static const char kTail[] = "); the MPI check did not finish\n";
  WriteAll(kTail, sizeof kTail - 1);
  ::_exit(3);
}

// mpirun sends SIGTERM to the other ranks when one fails: the root says so, every rank exits 3.
void OnStop(int /*signal*/) {
  WriteAll(stopped_message, stopped_message_length);
  ::_exit(3);
}

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

void InstallHandlers(int rank, int size) {
  crash_prefix_length = static_cast<size_t>(
      std::snprintf(crash_prefix, sizeof crash_prefix, "easyplan: error: rank %d of %d crashed (signal ", rank, size));
  if (rank == 0) {
    stopped_message_length = static_cast<size_t>(std::snprintf(
        stopped_message, sizeof stopped_message,
        "easyplan: error: the MPI check was stopped before it finished: another rank failed or was killed "
        "(mpirun's message names it)\n"));
  }
  for (int s : kCrashSignals) ::signal(s, OnCrash);
  ::signal(SIGTERM, OnStop);
}

void RestoreHandlers() {
  for (int s : kCrashSignals) ::signal(s, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
}

// ---- Waiting ----

std::string ErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<size_t>(length));
}

class Waiter {
 public:
  Waiter(int rank, int size, double timeout) : rank_(rank), size_(size), timeout_(timeout) {}

  /// Starts a non-blocking MPI call (`start` returns its code) and polls its request until it
  /// completes; an error, or the deadline passing, ends the job (exit 3).
  template <typename Start>
  void Await(const std::string& what, Start start) const {
    MPI_Request request;
    Check(start(&request), what);
    Wait(&request, what);
  }

  /// Polls `request` until it completes; past the deadline, ends the job (exit 3).
  void Wait(MPI_Request* request, const std::string& what) const {
    // The root waits a little less, so it is the one that reports.
    const double limit = rank_ == 0 ? timeout_ : timeout_ + 2;
    const double deadline = MPI_Wtime() + limit;
    for (int polls = 0;; ++polls) {
      int done = 0;
      const int rc = MPI_Test(request, &done, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) Fail(fmt::format("MPI failed in {}: {}", what, ErrorText(rc)));
      if (done) return;
      if (MPI_Wtime() > deadline) {
        Fail(
            fmt::format("waited {} s for {}: a rank stopped answering or died; the check did not finish "
                        "(--mpi-timeout sets the wait)",
                        limit, what));
      }
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
    std::fprintf(stderr, "easyplan: error: rank %d of %d %s\n", rank_, size_, message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
    ::_exit(3);
  }

 private:
  int rank_, size_;
  double timeout_;
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

class MpiTransport final : public Transport {
 public:
  MpiTransport(const Mesh& mesh, std::vector<RankBlock> blocks, int rank, const Waiter& waiter, MpiOptions::Fault fault)
      : geo_(mesh, blocks[static_cast<size_t>(rank)].first, blocks[static_cast<size_t>(rank)].count),
        blocks_(std::move(blocks)),
        rank_(rank),
        waiter_(waiter),
        fault_(fault) {
    waiter_.Await("every rank to start the check",
                  [&](MPI_Request* request) { return MPI_Ibarrier(MPI_COMM_WORLD, request); });
    // One communicator per set of axes larger than 1 (a group's membership ignores size-1 axes): the
    // ranks equal on every other axis. Every rank splits in the same order.
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
      waiter_.Check(
          MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(colors[static_cast<size_t>(rank_)]), rank_, &c.comm),
          "a mesh-axis communicator");
      MPI_Comm_set_errhandler(c.comm, MPI_ERRORS_RETURN);
    }
  }

  ~MpiTransport() override {
    for (auto& [mask, c] : comms_) MPI_Comm_free(&c.comm);
  }

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

  std::vector<HostTensor> GatherBlocks(const std::vector<HostTensor>& local) override {
    const std::vector<int64_t> sizes = GatherValues({local[0].size()});
    std::vector<double> send;
    for (const HostTensor& b : local) {
      EP_CHECK(b.shape == local[0].shape, "a probe gathers equal-shaped blocks");
      Append(send, b);
    }
    for (int64_t s : sizes) EP_CHECK(s == local[0].size(), "a probe gathers equal-shaped blocks");
    std::vector<double> recv(rank_ == 0 ? send.size() * blocks_.size() : 0);
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
    std::vector<int64_t> all(rank_ == 0 ? local.size() * blocks_.size() : 0);
    const std::string what = "the root to gather every device's figures (a probe)";
    waiter_.Await(what, [&](MPI_Request* request) {
      return MPI_Igather(local.data(), ToInt(static_cast<int64_t>(local.size()), what, waiter_), MPI_INT64_T,
                         all.data(), static_cast<int>(local.size()), MPI_INT64_T, 0, MPI_COMM_WORLD, request);
    });
    return all;
  }

 private:
  // The axes of `mask` larger than 1.
  unsigned Reduced(unsigned mask) const {
    unsigned out = 0;
    for (int a = 0; a < geo_.mesh().rank(); ++a) {
      if ((mask >> a & 1u) && geo_.AxisSize(a) > 1) out |= 1u << a;
    }
    return out;
  }

  // A rank's block coordinates on the axes outside `mask`, as one number: equal for the ranks that
  // share groups over `mask`.
  int64_t Color(const RankBlock& b, unsigned mask) const {
    int64_t color = 0;
    for (int a = 0; a < geo_.mesh().rank(); ++a) {
      if (mask >> a & 1u) continue;
      const size_t k = static_cast<size_t>(a);
      color = color * (geo_.AxisSize(a) / b.axis_n[k]) + b.axis_lo[k] / b.axis_n[k];
    }
    return color;
  }

  size_t Local(int64_t device) const { return static_cast<size_t>(device - geo_.first_local()); }

  // The groups over `axes` that hold a device of this rank, with who runs which member.
  std::vector<GroupView> Groups(const std::vector<int>& axes) const {
    unsigned mask = 0;
    for (int a : axes) mask |= 1u << a;
    mask = Reduced(mask);
    auto it = comms_.find(mask);
    EP_CHECK(it != comms_.end(), "a collective over axes of size 1 only");
    const AxisComm& comm = it->second;
    std::vector<GroupView> views;
    for (std::vector<int64_t>& members : geo_.Groups(axes)) {
      if (std::none_of(members.begin(), members.end(), [&](int64_t d) { return geo_.Owns(d); })) continue;
      GroupView v{std::move(members), std::vector<std::vector<size_t>>(comm.world.size()), &comm};
      for (size_t p = 0; p < v.members.size(); ++p) {
        const int owner = static_cast<int>(v.members[p] / geo_.local_devices());
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
    if (fault_ == MpiOptions::Fault::kNone || rank_ != static_cast<int>(blocks_.size()) - 1) return;
    if (fault_ == MpiOptions::Fault::kCrash) ::raise(SIGSEGV);
    if (fault_ == MpiOptions::Fault::kKill) ::raise(SIGKILL);
    while (true) ::pause();  // kStall: stops answering until mpirun stops it
  }

  MeshGeometry geo_;
  std::vector<RankBlock> blocks_;  ///< every rank's devices
  int rank_;
  const Waiter& waiter_;
  MpiOptions::Fault fault_;
  std::map<unsigned, AxisComm> comms_;
};

class MpiEngine final : public Engine {
 public:
  MpiEngine(MpiLaunch launch, MpiOptions options)
      : launch_(std::move(launch)), options_(options), waiter_(launch_.rank, launch_.size, options.timeout_seconds) {}

  ~MpiEngine() override {
    // Every rank passes here before any exits, so the root's report is written first.
    waiter_.Await("every rank to finish", [&](MPI_Request* request) { return MPI_Ibarrier(MPI_COMM_WORLD, request); });
    RestoreHandlers();
    MPI_Finalize();
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
    return std::unique_ptr<Transport>(
        std::make_unique<MpiTransport>(mesh, std::move(blocks), launch_.rank, waiter_, options_.fault));
  }

  int AgreeExitCode(int root_code) override {
    int code = root_code;
    waiter_.Await("the root's exit code",
                  [&](MPI_Request* request) { return MPI_Ibcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD, request); });
    return code;
  }

 private:
  MpiLaunch launch_;
  MpiOptions options_;
  Waiter waiter_;
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
    return Status::BadInput({}, "--engine mpi runs under mpirun, which starts one easyplan process per rank",
                            {"mpirun -np 8 easyplan check CONFIG --mesh fsdp=2,tp=4 --engine mpi",
                             "as root, Open MPI also needs --allow-run-as-root (or OMPI_ALLOW_RUN_AS_ROOT=1 and "
                             "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)"});
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return Status::BadInput({}, "--engine mpi: MPI starts once per process");
  if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) {
    return Status::Internal(
        fmt::format("MPI_Init failed under {} (rank {} of {})", launch->launcher, launch->rank, launch->size));
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank != launch->rank || size != launch->size) {
    MPI_Abort(MPI_COMM_WORLD, 3);
    return Status::Internal(
        fmt::format("MPI says rank {} of {}, the launcher rank {} of {}", rank, size, launch->rank, launch->size));
  }
  InstallHandlers(rank, size);
  return std::unique_ptr<Engine>(std::make_unique<MpiEngine>(*launch, options));
}

}  // namespace easyplan::kernels
