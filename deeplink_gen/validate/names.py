"""What a vendor name may be: it names a folder beside DIPU's own, a C++ namespace part,
CMake variables and Python modules, so it is a short lower-case C identifier that is no
keyword and no name DIPU/DIOPI use themselves. new-vendor refuses such a name, and
validate reports a vendor file that has one. The other values that become part of file
and folder names (device type, DIOPI impl folder, toolkit name) are as short."""

from __future__ import annotations

import keyword
import re

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
    return None


def length_problem(name: str) -> str | None:
    """Why *name*, part of file and folder names of the output, is too long (a phrase), or None."""
    return f"is longer than {MAX_NAME} characters" if len(name) > MAX_NAME else None
