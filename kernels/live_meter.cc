#include "kernels/live_meter.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "kernels/dist_tensor.h"

namespace easyplan::kernels {
namespace {

// Releases its bytes on the meter when the last copy of the tensor holding it goes away.
class Charge {
 public:
  Charge(std::vector<int64_t> bytes, std::function<void(const std::vector<int64_t>&)> release)
      : bytes_(std::move(bytes)), release_(std::move(release)) {}
  Charge(const Charge&) = delete;
  Charge& operator=(const Charge&) = delete;
  ~Charge() { release_(bytes_); }

 private:
  std::vector<int64_t> bytes_;
  std::function<void(const std::vector<int64_t>&)> release_;
};

}  // namespace

LiveMeter::LiveMeter(int64_t devices, int64_t bytes_per_element)
    : bytes_per_element_(bytes_per_element),
      live_(static_cast<size_t>(devices), 0),
      peak_(static_cast<size_t>(devices), 0) {}

std::shared_ptr<const void> LiveMeter::Charge(const DistTensor& t) {
  std::vector<int64_t> bytes(live_.size(), 0);
  for (size_t d = 0; d < bytes.size() && d < t.local.size(); ++d) {
    bytes[d] = t.local[d].size() * bytes_per_element_;
    live_[d] += bytes[d];
    peak_[d] = std::max(peak_[d], live_[d]);
  }
  return std::make_shared<const class Charge>(std::move(bytes),
                                              [this](const std::vector<int64_t>& held) { Release(held); });
}

void LiveMeter::Release(const std::vector<int64_t>& bytes) {
  for (size_t d = 0; d < bytes.size(); ++d) live_[d] -= bytes[d];
}

}  // namespace easyplan::kernels
