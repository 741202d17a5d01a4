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
#include "core/terminal_text.h"

#if EASYPLAN_MIMALLOC
#include <mimalloc.h>
#endif

namespace {

#if EASYPLAN_MIMALLOC
// Transparent 2 MiB pages for all of mimalloc's memory: a large tree touches tens of megabytes, and
// faulting them in 4 KiB at a time costs a fifth of `validate`'s wall time on DeepSeek-V3's HF tree
// (26.9 -> 22.5 ms). mimalloc decides whether to use large pages when it maps its first segment, and
// the shared libraries' initialisers allocate before main(), so the options are set from the
// executable's .preinit_array, which the dynamic loader runs before any library initialiser. Setting
// an option only stores it (no allocation). Every segment, the first included, is committed at once.
// MIMALLOC_LARGE_OS_PAGES in the environment, read by mimalloc itself, overrides all of this.
void ConfigureAllocator(int, char**, char**) {
  if (std::getenv("MIMALLOC_LARGE_OS_PAGES") != nullptr) return;
  mi_option_set_enabled(mi_option_large_os_pages, true);
  mi_option_set(mi_option_eager_commit_delay, 0);
}
[[gnu::section(".preinit_array"), gnu::used]] constexpr void (*kConfigureAllocator)(int, char**,
                                                                                    char**) = &ConfigureAllocator;
#endif

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
  // Writing to a pipe whose reader has gone (`easyplan resolve X | head`) must not kill the process:
  // WriteOutput sees EPIPE instead and exits quietly (docs/RELIABILITY.md).
  std::signal(SIGPIPE, SIG_IGN);
  const bool stdin_open = KeepStandardDescriptor(0, O_RDONLY);
  const bool stdout_open = KeepStandardDescriptor(1, O_WRONLY);
  KeepStandardDescriptor(2, O_WRONLY);
  if (!stdin_open) std::cin.setstate(std::ios::badbit);    // "cannot read standard input: it is closed"
  if (!stdout_open) std::cout.setstate(std::ios::badbit);  // "cannot write to standard output: ..."
  // Every message reaches the terminal through one filter: a config key, a --mesh value or a file name
  // holding ESC, BEL or NUL is shown as \x1b, \x07, \x00 instead of acting on the terminal
  // (core/terminal_text.h). stdout is filtered too when it is a terminal; piped or redirected, the
  // artifact's bytes are passed on as they are (as `ls` does with names).
  easyplan::TerminalSafeBuf err_filter(std::cerr.rdbuf());
  std::ostream err(&err_filter);
  err << std::unitbuf;
  easyplan::TerminalSafeBuf out_filter(std::cout.rdbuf());
  std::ostream terminal_out(&out_filter);
  std::ostream& out = stdout_open && ::isatty(1) == 1 ? terminal_out : std::cout;
  try {
    easyplan::RealFileSystem fs;
    easyplan::cli::Context ctx{fs, std::cin, out, err, ""};
    const int code = easyplan::cli::RunApp(argc, argv, ctx);
    out.flush();
    return code;
  } catch (const std::exception& e) {
    err << "easyplan: internal error: " << e.what() << "\n";
    return easyplan::cli::kExitInternal;
  } catch (...) {
    err << "easyplan: internal error: unknown exception\n";
    return easyplan::cli::kExitInternal;
  }
}
