#include "cli/commands.h"

namespace easyplan::cli {

const std::vector<Command>& AllCommands() {
  static const std::vector<Command> kCommands = {
      {"resolve", "print the complete config EasyDeL would use, with every default and derived field",
       AddResolveCommand},
  };
  return kCommands;
}

}  // namespace easyplan::cli
