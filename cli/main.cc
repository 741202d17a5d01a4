// easyplan: config compiler and sharding planner. main() builds the command table, parses flags
// and maps every outcome to an exit code: 0 ok, 1 findings, 2 bad input or usage, 3 internal error.
#include <exception>
#include <iostream>

#include "cli/app.h"

int main(int argc, char** argv) {
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
