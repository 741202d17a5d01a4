#ifndef EASYPLAN_KERNELS_LIVE_METER_H_
#define EASYPLAN_KERNELS_LIVE_METER_H_

// Live activation bytes per simulated device, measured while the forward runs: every tensor an SPMD op
// hands back to the model is charged to each device (its local block's elements at the activation
// dtype) until the last DistTensor holding it goes away. Copies of one tensor share one charge, as
// they share one buffer in a real runtime (the residual stream kept for the backward is the layer
// output, not a second copy). The peak of the sum is what the forward needed at once.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace easyplan::kernels {

struct DistTensor;

class LiveMeter {
 public:
  LiveMeter(int64_t devices, int64_t bytes_per_element);

  /// A charge for `t`'s local blocks, released when the returned handle (and every copy) is gone.
  /// The meter must outlive every handle.
  std::shared_ptr<const void> Charge(const DistTensor& t);

  const std::vector<int64_t>& live() const { return live_; }
  const std::vector<int64_t>& peak() const { return peak_; }

  /// Remembers the peak so far (the forward marks the end of its layers, before the logits).
  void Mark() { marked_ = peak_; }
  const std::vector<int64_t>& marked() const { return marked_; }

 private:
  // One tensor's bytes, given back to the meter when the last copy of the tensor goes away.
  class Held {
   public:
    Held(LiveMeter* meter, std::vector<int64_t> bytes) : meter_(meter), bytes_(std::move(bytes)) {}
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;
    ~Held();

   private:
    LiveMeter* meter_;
    std::vector<int64_t> bytes_;
  };

  int64_t bytes_per_element_;
  std::vector<int64_t> live_, peak_, marked_;
};

}  // namespace easyplan::kernels

#endif  // EASYPLAN_KERNELS_LIVE_METER_H_
