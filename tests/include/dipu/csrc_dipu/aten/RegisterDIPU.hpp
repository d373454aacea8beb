// Stand-in for csrc_dipu/aten/RegisterDIPU.hpp (DIPU 9dd38082): the library
// macro and the four per-op registration macros used by generated kernels.
//
// The registration macros expand the way DIPU's do: they test the weak DIOPI
// symbol's address, consult the force-fallback / autocompare regex lists, and
// call m.impl(opname, TORCH_FN(...)) on the wrapper, on its "_autocompare" twin
// (formed by token pasting) or on the custom CPU fallback. A misspelt wrapper,
// a missing twin, an undeclared DIOPI symbol or an unboxable signature is
// therefore a compile error here too.
//
// DIPU_LIBRARY_IMPL is simplified: upstream defers registration through
// at::DipuOpRegister and guards with c10::impl::dispatch_key_allowlist_check,
// which torch 2.13 no longer has. Here it registers through torch's own
// static-init helper, with the same (ns, key, m) interface.
#pragma once

#include <cstdlib>
#include <iostream>

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "csrc_dipu/aten/ops/OpRegexMatch.hpp"
#include "csrc_dipu/aten/ops/OpUtils.hpp"
#include "csrc_dipu/base/basedef.h"

namespace at {
// Boxed catch-all CPU fallback registered for every op DIPU does not cover.
void dipu_fallback(const c10::OperatorHandle& op, DispatchKeySet dispatch_keys,
                   torch::jit::Stack* stack);
}  // namespace at

// Print once per process.
#define DIPU_LOG_WARNING_ONCE(x)       \
  do {                                 \
    static bool dipu_warned_ = false;  \
    if (!dipu_warned_) {               \
      std::cout << x;                  \
      dipu_warned_ = true;             \
    }                                  \
  } while (0)

// Print once, and only when DIPU_DUMP_OP_ARGS is set to a value >= 0.
#define DIPU_OP_LOG_WARNING_ONCE(...)                                   \
  do {                                                                  \
    const char* dipu_env_ = std::getenv("DIPU_DUMP_OP_ARGS");           \
    if (dipu_env_ != nullptr && std::atoi(dipu_env_) >= 0) {            \
      DIPU_LOG_WARNING_ONCE(__VA_ARGS__);                               \
    }                                                                   \
  } while (0)

// ---- library block ----------------------------------------------------------
#define DIPU_LIBRARY_IMPL(ns, k, m) DIPU_LIBRARY_IMPL_WITH_UID_(ns, k, m, C10_UID)

#define DIPU_LIBRARY_IMPL_WITH_UID_(ns, k, m, uid)                                \
  static void C10_CONCATENATE(dipu_library_impl_fn_##ns##_##k##_,                 \
                              uid)(torch::Library&);                              \
  static const ::torch::detail::TorchLibraryInit C10_CONCATENATE(                 \
      dipu_library_impl_init_##ns##_##k##_, uid)(                                 \
      ::torch::Library::IMPL,                                                     \
      &C10_CONCATENATE(dipu_library_impl_fn_##ns##_##k##_, uid), #ns,             \
      c10::make_optional(c10::DispatchKey::k), __FILE__, __LINE__);               \
  void C10_CONCATENATE(dipu_library_impl_fn_##ns##_##k##_,                        \
                       uid)(torch::Library & (m))

// ---- shared pieces of the four registration macros --------------------------
#define DIPU_REGISTER_USE_DIOPI_(opname, diopiFunc, force)                        \
  (reinterpret_cast<void*>(diopiFunc) != nullptr && !(force) &&                 \
   !::dipu::op_regex_match::isOpMatch(opname,                                   \
                                      ::dipu::op_regex_match::kFallbackMatchers))

#define DIPU_REGISTER_WARN_FALLBACK_(opname, diopiFunc)                           \
  do {                                                                          \
    if (reinterpret_cast<void*>(diopiFunc) == nullptr) {                        \
      DIPU_OP_LOG_WARNING_ONCE(#diopiFunc << " is not yet implemented, "        \
                                          << (opname)                           \
                                          << " will be fallback to cpu\n");     \
    } else {                                                                    \
      DIPU_OP_LOG_WARNING_ONCE("force fallback has been set, "                  \
                               << (opname) << " will be fallback to cpu\n");    \
    }                                                                           \
  } while (0)

// Register the wrapper, or its _autocompare twin if the op is listed in
// DIPU_AUTOCOMPARE_OPS_LIST.
#define DIPU_REGISTER_WRAPPER_OR_TWIN_(opname, wrapperFunc)                       \
  do {                                                                          \
    if (::dipu::op_regex_match::isOpMatch(                                      \
            opname, ::dipu::op_regex_match::kAutocompareMatchers)) {            \
      m.impl(opname, TORCH_FN(wrapperFunc##_autocompare));                      \
    } else {                                                                    \
      m.impl(opname, TORCH_FN(wrapperFunc));                                    \
    }                                                                           \
  } while (0)

// ("op", ::diopiX, dipu::native::wrapper)
#define NO_CUSTOMFALLBACK_WITH_AUTOCOMPARE_REGISTER(opname, diopiFunc, wrapperFunc) \
  do {                                                                            \
    if (DIPU_REGISTER_USE_DIOPI_(opname, diopiFunc, false)) {                     \
      DIPU_REGISTER_WRAPPER_OR_TWIN_(opname, wrapperFunc);                        \
    } else {                                                                      \
      DIPU_REGISTER_WARN_FALLBACK_(opname, diopiFunc);                            \
    }                                                                             \
  } while (false);

// ("op", ::diopiX, dipu::native::wrapper)
#define NO_CUSTOMFALLBACK_NO_AUTOCOMPARE_REGISTER(opname, diopiFunc, wrapperFunc) \
  do {                                                                          \
    if (DIPU_REGISTER_USE_DIOPI_(opname, diopiFunc, false)) {                   \
      m.impl(opname, TORCH_FN(wrapperFunc));                                    \
    } else {                                                                    \
      DIPU_REGISTER_WARN_FALLBACK_(opname, diopiFunc);                          \
    }                                                                           \
  } while (false);

// ("op", ::diopiX, <true|false> force fallback, dipu::native::wrapper,
//  dipu::native::custom_fallback_wrapper)
#define WITH_CUSTOMFALLBACK_WITH_AUTOCOMPARE_REGISTER(                            \
    opname, diopiFunc, force_fallback, wrapperFunc, customFallbackFunc)         \
  do {                                                                          \
    if (::dipu::native::dipuKeepTorchopDefaultImpl(opname)) {                   \
      break;                                                                    \
    }                                                                           \
    if (DIPU_REGISTER_USE_DIOPI_(opname, diopiFunc, force_fallback)) {          \
      DIPU_REGISTER_WRAPPER_OR_TWIN_(opname, wrapperFunc);                      \
    } else {                                                                    \
      DIPU_REGISTER_WARN_FALLBACK_(opname, diopiFunc);                          \
      m.impl(opname, TORCH_FN(customFallbackFunc));                             \
    }                                                                           \
  } while (false);

// Same arguments as above.
#define WITH_CUSTOMFALLBACK_NO_AUTOCOMPARE_REGISTER(                              \
    opname, diopiFunc, force_fallback, wrapperFunc, customFallbackFunc)         \
  do {                                                                          \
    if (::dipu::native::dipuKeepTorchopDefaultImpl(opname)) {                   \
      break;                                                                    \
    }                                                                           \
    if (DIPU_REGISTER_USE_DIOPI_(opname, diopiFunc, force_fallback)) {          \
      m.impl(opname, TORCH_FN(wrapperFunc));                                    \
    } else {                                                                    \
      DIPU_REGISTER_WARN_FALLBACK_(opname, diopiFunc);                          \
      m.impl(opname, TORCH_FN(customFallbackFunc));                             \
    }                                                                           \
  } while (false);
