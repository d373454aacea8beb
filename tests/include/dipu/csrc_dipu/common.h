// Stand-in for csrc_dipu/common.h (DIPU 9dd38082): a deprecated umbrella header
// that upstream only uses to pull in csrc_dipu/base/basedef.h.
#pragma once

#include "csrc_dipu/base/basedef.h"
