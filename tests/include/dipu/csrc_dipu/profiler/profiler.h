// Stand-in for csrc_dipu/profiler/profiler.h (DIPU 9dd38082), reduced to the
// RAII record helper that generated kernels use. (The real header also pulls
// in kineto's IActivityProfiler.h; not needed for the declarations here.)
#pragma once

#include <string>

namespace dipu {
namespace profile {

class RecordBlockCreator {
 public:
  explicit RecordBlockCreator(std::string name);
  RecordBlockCreator(const RecordBlockCreator&) = delete;
  RecordBlockCreator& operator=(const RecordBlockCreator&) = delete;
  ~RecordBlockCreator();

  // Close the record before the object goes out of scope.
  void end();
};

}  // namespace profile
}  // namespace dipu
