#ifndef EASYPLAN_CORE_MODE_H_
#define EASYPLAN_CORE_MODE_H_

// The step a command describes, one type for every layer (issue 46): training, or one of EasyDeL's
// runtime modes of serving (easydel/infra/etils.py's MODE_TRAIN, MODE_PREFILL, MODE_DECODE and
// MODE_INSERT, which OperationMetadata.get_shardings and PartitionAxis.resolve_spec take):
//  - train: forward and backward of a global batch, with its gradients and optimizer state;
//  - prefill: one forward over the prompts, writing their KV cache;
//  - decode: one new token per sequence against a KV cache of the given length;
//  - insert: a prefill's cache written into a running batch (activations and validate only).
// The partition axes resolve with their generation variants in decode and insert (eformer's
// GENERATION_MODES), with the training ones in train and prefill.

#include <optional>
#include <string_view>

namespace easyplan {

enum class Mode { kTrain, kPrefill, kDecode, kInsert };
/// The modes of one step's memory and price (memory, cost, suggest, report), and every mode (activations,
/// validate), in the order commands list them.
inline constexpr Mode kStepModes[] = {Mode::kTrain, Mode::kPrefill, Mode::kDecode};
inline constexpr Mode kModes[] = {Mode::kTrain, Mode::kPrefill, Mode::kDecode, Mode::kInsert};

/// "train", "prefill", "decode", "insert".
std::string_view ModeName(Mode mode);
/// EasyDeL's constant: "__train__", "__prefill__", "__autoregressive__", "__insert__".
std::string_view ModeConstant(Mode mode);
/// Accepts the names above and EasyDeL's constants.
std::optional<Mode> ParseMode(std::string_view text);
/// Decode and insert are eformer's GENERATION_MODES; prefill is not.
bool IsGenerationMode(Mode mode);

}  // namespace easyplan

#endif  // EASYPLAN_CORE_MODE_H_
