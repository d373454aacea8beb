// Stand-in for csrc_dipu/aten/ops/DIPUOpInferrer.h (DIPU 9dd38082). Generated
// kernels include it for hand-written custom code that infers output
// shape/dtype; only the class names are declared here (no members), so custom
// code that uses the inferrers is outside what this stand-in can check.
#pragma once

namespace dipu {
namespace native {

class OpInferrer;
class BinaryOpInferrer;
class BinaryFloatOpInferrer;
class ComparisonOpInferrer;
class LogicOpInferrer;

}  // namespace native
}  // namespace dipu
