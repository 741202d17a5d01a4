#include "kernels/live_meter.h"

#include <algorithm>
#include <utility>

#include "kernels/dist_tensor.h"

namespace easyplan::kernels {

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
  return std::make_shared<const Held>(this, std::move(bytes));
}

LiveMeter::Held::~Held() {
  for (size_t d = 0; d < bytes_.size(); ++d) meter_->live_[d] -= bytes_[d];
}

}  // namespace easyplan::kernels
