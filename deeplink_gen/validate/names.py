"""What a vendor name may be: it names a folder beside DIPU's own, a C++ namespace part,
CMake variables and Python modules, so it is a short lower-case C identifier that is no
keyword and no name DIPU/DIOPI use themselves. new-vendor refuses such a name, and
validate reports a vendor file that has one. The other values that become part of file
and folder names (device type, DIOPI impl folder, toolkit name) are as short.

A name deeplink-gen writes a file or folder under (a vendor, DIOPI impl folder or
hand-written file) is also one CMake reads as one word and every file system takes: the
rendered tree is a DIPU checkout's, built by CMake and checked out on Windows and macOS
too, where a name that works here splits a CMake list, names a device, or collides with
another that differs only in case."""

from __future__ import annotations

import keyword
import re

from deeplink_gen.cpptext import CONTROL

MAX_NAME = 48       # characters of a name that becomes part of file and folder names
# Bytes of one file or folder name copied into the output (a hand-written source): the
# file system allows 255, and the output is written through a temporary file beside it
# whose name is longer.
MAX_FILE_NAME = 200

# C and C++ keywords (C++17 and C23, alternative operator spellings included).
C_KEYWORDS = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t
class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield
decltype default delete do double dynamic_cast else enum explicit export extern false float for friend
goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private
protected public register reinterpret_cast requires restrict return short signed sizeof static
static_assert static_cast struct switch template this thread_local throw true try typedef typeid
typename typeof typeof_unqual union unsigned using virtual void volatile wchar_t while xor xor_eq
""".split())

# Names DIPU/DIOPI use themselves: folders next to the vendor folders, namespaces, build targets.
DIPU_RESERVED = frozenset("""
aten autograd base binding common core cpu device devapis diopi diopirt dipu distributed dist
generated include metrics onboarding ops profiler runtime scripts stub test tests third_party torch
torch_dipu utils vendor vendors xpu meta
""".split())

NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")

# Names the preprocessor gives a meaning of its own: g++ refuses to define `defined`, and the
# others are its operators and its names inside macros (each is also a reserved identifier).
PREPROCESSOR_NAMES = frozenset("""
defined __has_include __has_include_next __has_cpp_attribute __has_c_attribute __has_attribute __has_builtin
__has_feature __has_extension __has_embed _Pragma __VA_ARGS__ __VA_OPT__
""".split())
# An identifier the C++ standard reserves for the implementation ([lex.name]: one that holds a
# double underscore, or starts with an underscore and an upper-case letter): a compiler or a
# standard header may define it as a macro or a built-in.
RESERVED_RE = re.compile(r"^_[A-Z]|__")

# Macros of the C and C++ standard headers (and the compilers' predefined ones) that a
# translation unit may see: a name of the vendor's that is one is replaced by the macro
# (an enumerator EOF becomes -1), or, defined as a macro, replaces the library's.
STANDARD_MACROS = frozenset("""
NULL EOF TRUE FALSE BUFSIZ FILENAME_MAX FOPEN_MAX L_tmpnam TMP_MAX SEEK_SET SEEK_CUR SEEK_END _IOFBF _IOLBF
_IONBF stdin stdout stderr EXIT_SUCCESS EXIT_FAILURE RAND_MAX MB_CUR_MAX MB_LEN_MAX CHAR_BIT CHAR_MIN CHAR_MAX
SCHAR_MIN SCHAR_MAX UCHAR_MAX SHRT_MIN SHRT_MAX USHRT_MAX INT_MIN INT_MAX UINT_MAX LONG_MIN LONG_MAX ULONG_MAX
LLONG_MIN LLONG_MAX ULLONG_MAX SIZE_MAX PTRDIFF_MIN PTRDIFF_MAX INTPTR_MIN INTPTR_MAX UINTPTR_MAX INTMAX_MIN
INTMAX_MAX UINTMAX_MAX INT8_MIN INT8_MAX INT16_MIN INT16_MAX INT32_MIN INT32_MAX INT64_MIN INT64_MAX UINT8_MAX
UINT16_MAX UINT32_MAX UINT64_MAX WCHAR_MIN WCHAR_MAX WINT_MIN WINT_MAX WEOF SIG_ATOMIC_MIN SIG_ATOMIC_MAX
FLT_MIN FLT_MAX FLT_EPSILON DBL_MIN DBL_MAX DBL_EPSILON LDBL_MIN LDBL_MAX LDBL_EPSILON HUGE_VAL HUGE_VALF
HUGE_VALL INFINITY NAN FP_INFINITE FP_NAN FP_NORMAL FP_SUBNORMAL FP_ZERO CLOCKS_PER_SEC TIME_UTC
EDOM ERANGE EILSEQ EPERM ENOENT EINTR EIO EBADF EAGAIN ENOMEM EACCES EFAULT EBUSY EEXIST ENODEV EINVAL ENOSPC
ETIMEDOUT ENOSYS ENOTSUP SIGABRT SIGFPE SIGILL SIGINT SIGSEGV SIGTERM SIG_DFL SIG_ERR SIG_IGN LC_ALL LC_COLLATE
LC_CTYPE LC_MONETARY LC_NUMERIC LC_TIME errno assert offsetof setjmp va_start va_arg va_end va_copy NDEBUG
__FILE__ __LINE__ __DATE__ __TIME__ __cplusplus __STDC__ linux unix
""".split())

# Macros of torch's and DIPU's headers that every rendered runtime file sees (c10's
# Exception.h and Macros.h, ATen's dispatch macros; DIPU 9dd38082's csrc_dipu/common.h,
# base/basedef.h, runtime/device/basedef.h, runtime/devproxy/diclproxy.h and utils/Log.h),
# and the one the rendered vendorapi.h defines: torch's by their prefixes (C10_, AT_,
# TORCH_), DIPU's by name (its vendors' own DIPU_CALL<VENDOR> macros are theirs to define).
TORCH_MACRO_PREFIXES = ("C10_", "AT_", "TORCH_")
DIPU_MACROS = frozenset("""
DIPU_ALLOCATOR_DISPATCH_DEVICE_ID DIPU_API DIPU_AUTOCAST_DEVICE_TYPE_MACRO DIPU_AUTOGRAD_DEVICE_TYPE_MACRO
DIPU_CALL_DICLAPIS DIPU_CODELOC DIPU_DEBUG_ALLOCATOR DIPU_DEVICE_TYPE_MACRO DIPU_ENV_VAR DIPU_HIDDEN DIPU_LOG
DIPU_LOGE DIPU_LOGW DIPU_LOG_ERROR DIPU_LOG_ERROR_ONCE DIPU_LOG_INFO DIPU_LOG_ONCE
DIPU_MAY_CAST_VENDOR_NAME_TO_DEVICE_TYPE DIPU_REGISTER_ALLOCATOR DIPU_SPARSE_DEVICE_TYPE_MACRO DIPU_STRING
DIPU_STRINGIFY_AFTER_EXPANSION DIPU_WEAK deviceDefaultStreamLiteral
""".split())

# What a file or folder name must not hold: ; separates a CMake list, $ starts a CMake
# variable reference, quotes and the backslash end or escape a CMake (and shell) word, and
# Windows refuses the rest.
_UNSAFE = frozenset(';$"\'`\\<>:|?*')
# Device names Windows reserves in every folder, with any extension (aux.cpp too), in any case.
WINDOWS_RESERVED = frozenset(["con", "prn", "aux", "nul", *(f"{port}{i}" for port in ("com", "lpt")
                                                          for i in "0123456789\u00b9\u00b2\u00b3")])


def vendor_name_problem(name: str) -> str | None:
    """Why *name* cannot be a vendor name (a phrase such as "is a C/C++ keyword"), or None."""
    if not NAME_RE.match(name):
        return "is not a lower-case C identifier (a-z, 0-9 and _, starting with a letter)"
    if len(name) > MAX_NAME:
        return length_problem(name)
    if name in C_KEYWORDS:
        return "is a C/C++ keyword"
    if name in DIPU_RESERVED or keyword.iskeyword(name):
        return "is reserved: DIPU/DIOPI or Python use it themselves"
    return file_name_problem(name)


def macro_name_problem(name: str) -> str | None:
    """Why *name*, a name the rendered C++ defines or declares, is one the compiler or the
    headers around it already give a meaning (a phrase such as "is a C/C++ keyword"), or None."""
    if name in C_KEYWORDS:
        return "is a C/C++ keyword"
    if name in STANDARD_MACROS:
        return "is a standard C macro name"
    if name in DIPU_MACROS:
        return "is a macro DIPU defines itself"
    if name.startswith(TORCH_MACRO_PREFIXES):
        return f"is named like torch's own macros ({', '.join(p + '*' for p in TORCH_MACRO_PREFIXES)})"
    return reserved_name_problem(name)


def reserved_name_problem(name: str) -> str | None:
    """Why *name* is one the preprocessor or the implementation reserves (a phrase), or None."""
    if name in PREPROCESSOR_NAMES:
        return "is a name the preprocessor reserves"
    if RESERVED_RE.search(name):
        return ("is a reserved identifier (one holding __ or starting with _ and an upper-case letter "
                "belongs to the compiler and the standard library)")
    return None


def file_name_problem(name: str) -> str | None:
    """Why *name*, one file or folder name of the output, is not one that CMake reads as a
    single word and every file system takes (a phrase), or None."""
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:
        return "is not UTF-8"
    if CONTROL.search(name):
        return "holds a control character or line break"
    unsafe = sorted(set(name) & _UNSAFE)
    if unsafe:
        return f"holds {' '.join(unsafe)}, which CMake or a file system reads otherwise than as part of a name"
    if name.startswith("-"):
        return "starts with '-', which a command line reads as an option"
    if name.endswith((".", " ")):
        return "ends in a dot or a space, which Windows drops"
    if name.split(".", 1)[0].rstrip(" ").lower() in WINDOWS_RESERVED:
        return "is a device name on Windows (CON, PRN, AUX, NUL, COM1, LPT1, ..., with any extension)"
    if size > MAX_FILE_NAME:
        return f"is longer than {MAX_FILE_NAME} bytes"
    return None


def path_problem(rel: str) -> str | None:
    """Why the relative path *rel* (parts separated by /) cannot be written as it is (a
    sentence on its first part that has a problem), or None."""
    for part in rel.split("/"):
        problem = file_name_problem(part)
        if problem is not None:
            return f"the file name {problem}" if part == rel else f"a name in its path, '{part}', {problem}"
    return None


def length_problem(name: str) -> str | None:
    """Why *name*, part of file and folder names of the output, is too long (a phrase), or None."""
    return f"is longer than {MAX_NAME} characters" if len(name) > MAX_NAME else None
