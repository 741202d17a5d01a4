#include "core/mode.h"

namespace easyplan {

std::string_view ModeName(Mode mode) {
  switch (mode) {
    case Mode::kTrain:
      return "train";
    case Mode::kPrefill:
      return "prefill";
    case Mode::kDecode:
      return "decode";
    case Mode::kInsert:
      return "insert";
  }
  return "train";
}

std::string_view ModeConstant(Mode mode) {
  switch (mode) {
    case Mode::kTrain:
      return "__train__";
    case Mode::kPrefill:
      return "__prefill__";
    case Mode::kDecode:
      return "__autoregressive__";
    case Mode::kInsert:
      return "__insert__";
  }
  return "__train__";
}

std::optional<Mode> ParseMode(std::string_view text) {
  for (Mode mode : kModes) {
    if (text == ModeName(mode) || text == ModeConstant(mode)) return mode;
  }
  return std::nullopt;
}

bool IsGenerationMode(Mode mode) { return mode == Mode::kDecode || mode == Mode::kInsert; }

}  // namespace easyplan
