#include "cli/commands.h"

namespace easyplan::cli {

const std::vector<Command>& AllCommands() {
  static const std::vector<Command> kCommands = {
      {"resolve", "print the complete config EasyDeL would use, with every default and derived field",
       AddResolveCommand},
      {"tree", "list every tensor of the model: name, shape, dtype, size", AddTreeCommand},
  };
  return kCommands;
}

}  // namespace easyplan::cli
