// Stand-in for csrc_dipu/runtime/core/DIPUGeneratorImpl.h (DIPU 9dd38082).
//
// DIPUGeneratorImpl is the base of every vendor generator. A vendor subclass
// must implement set_state() (inherited pure virtual from c10::GeneratorImpl)
// and update_state(); it may read/write the protected members below. Every
// vendor must also define vendorMakeGenerator() (strong, no default).
#pragma once

#include <cstdint>
#include <memory>

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/GeneratorImpl.h>

namespace dipu {

class DIPUGeneratorImpl : public c10::GeneratorImpl {
 public:
  explicit DIPUGeneratorImpl(at::DeviceIndex device_index = -1);
  ~DIPUGeneratorImpl() override = default;

  std::shared_ptr<DIPUGeneratorImpl> clone() const;
  void set_current_seed(uint64_t seed) override;
  uint64_t current_seed() const override;
  uint64_t seed() override;
  static at::DeviceType device_type();
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
  // As in DIPU: torch 2.1 declares these in c10::GeneratorImpl; DIPU's build defines
  // DIPU_TORCH_VERSION as the 5-digit version (20101 for 2.1.1).
#if DIPU_TORCH_VERSION == 20100 || DIPU_TORCH_VERSION == 20101
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
#else
  virtual void set_offset(uint64_t offset);
  virtual uint64_t get_offset() const;
#endif
  // set_state(const c10::TensorImpl&) stays pure: each vendor provides it.

 protected:
  void set_state_flag(bool flag);
  // Rebuild state_ from seed_/offset_ when state_need_reset_ is set.
  virtual void update_state() const = 0;

  DIPUGeneratorImpl* clone_impl() const override;

  volatile uint64_t offset_;
  uint64_t seed_ = c10::default_rng_seed_val;
  mutable at::Tensor state_;
  mutable bool state_need_reset_;
};

at::Generator& getDefaultDIPUGenerator(at::DeviceIndex device_index = -1);
at::Generator createDIPUGenerator(at::DeviceIndex device_index = -1);

void manual_seed(at::DeviceIndex idx, uint64_t seed);
void seed(at::DeviceIndex idx);
uint64_t initial_seed(at::DeviceIndex idx);
at::Tensor get_rng_state(at::DeviceIndex idx);
void set_rng_state(at::DeviceIndex idx, at::Tensor state);

// Vendor hook: build this vendor's generator for a device.
const at::Generator vendorMakeGenerator(at::DeviceIndex device_index = -1);

void releaseAllGenerator();

}  // namespace dipu
