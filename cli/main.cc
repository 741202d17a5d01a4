// easyplan: config compiler and sharding planner. main() builds the command table, parses flags
// and maps every outcome to an exit code: 0 ok, 1 findings, 2 bad input or usage, 3 internal error.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "cli/app.h"

#if EASYPLAN_MIMALLOC
#include <mimalloc.h>
#endif

namespace {

// Whether descriptor `fd` was open at startup. A closed one is reopened on /dev/null so that no file
// easyplan opens later lands on 0, 1 or 2 (where a stray write to stdout would corrupt it).
// Descriptors are checked lowest first, and open() returns the lowest free one, so it lands on `fd`.
bool KeepStandardDescriptor(int fd, int flags) {
  if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) return true;
  const int opened = ::open("/dev/null", flags);
  if (opened >= 0 && opened != fd) ::close(opened);
  return false;
}

}  // namespace

int main(int argc, char** argv) {
#if EASYPLAN_MIMALLOC
  // Transparent 2 MiB pages for mimalloc's segments from here on: a large tree touches tens of
  // megabytes, and faulting them in 4 KiB at a time was a third of `validate`'s wall time on
  // DeepSeek-V3 (48 -> 35 ms with these two options). MIMALLOC_LARGE_OS_PAGES in the environment,
  // read by mimalloc itself, overrides this.
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") == nullptr) {
    mi_option_set(mi_option_eager_commit_delay, 0);
    mi_option_set_enabled(mi_option_large_os_pages, true);
  }
#endif
  // Writing to a pipe whose reader has gone (`easyplan resolve X | head`) must not kill the process:
  // WriteOutput sees EPIPE instead and exits quietly (docs/RELIABILITY.md).
  std::signal(SIGPIPE, SIG_IGN);
  const bool stdin_open = KeepStandardDescriptor(0, O_RDONLY);
  const bool stdout_open = KeepStandardDescriptor(1, O_WRONLY);
  KeepStandardDescriptor(2, O_WRONLY);
  if (!stdin_open) std::cin.setstate(std::ios::badbit);    // "cannot read standard input: it is closed"
  if (!stdout_open) std::cout.setstate(std::ios::badbit);  // "cannot write to standard output: ..."
  try {
    easyplan::RealFileSystem fs;
    easyplan::cli::Context ctx{fs, std::cin, std::cout, std::cerr, ""};
    return easyplan::cli::RunApp(argc, argv, ctx);
  } catch (const std::exception& e) {
    std::cerr << "easyplan: internal error: " << e.what() << "\n";
    return easyplan::cli::kExitInternal;
  } catch (...) {
    std::cerr << "easyplan: internal error: unknown exception\n";
    return easyplan::cli::kExitInternal;
  }
}
