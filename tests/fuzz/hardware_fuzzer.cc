// Fuzzes `--hardware FILE` (api/hardware.h): a YAML accelerator profile in the format of
// schemas/hardware/*.yaml, read through LoadHardwareProfile as `cost` and `suggest` read it.
//
// Properties beyond "no crash": every failure is BadInput; an accepted profile has a name and finite,
// positive peak FLOP/s, bandwidths and efficiencies (what the step-time model divides by).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "api/hardware.h"
#include "core/file_system.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace easyplan;
  auto fs = std::make_shared<MemFileSystem>();
  fs->AddFile("profile.yaml", std::string(reinterpret_cast<const char*>(data), size));
  api::Environment env;
  env.fs = fs;
  StatusOr<step::HardwareProfile> profile = api::LoadHardwareProfile(env, "profile.yaml");
  fuzz::CheckBadInput(profile.status());
  if (!profile.ok()) return 0;
  fuzz::Check(!profile->name.empty(), "an accepted profile without a name");
  for (double v :
       {profile->peak_flops_bf16, profile->hbm_bandwidth, profile->fast.bandwidth, profile->network.bandwidth,
        profile->matmul_efficiency, profile->link_efficiency, profile->hbm_efficiency}) {
    fuzz::Check(std::isfinite(v) && v > 0, "an accepted profile with a rate the cost model cannot divide by");
  }
  return 0;
}
