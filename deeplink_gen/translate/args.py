"""How a value reaches a DIOPI call: one ArgKind per schema argument type or
call-only local, and the one table of C++ local names each kind declares
(``selfDiopiTensorHandle``, ``alphaDiopiScalar``, ...). Plans, templates,
validation and the importer all read these names from here."""

from __future__ import annotations

import enum


class ArgKind(enum.Enum):
    # Schema arguments, by type.
    TENSOR = "tensor"                 # const handle
    OPT_TENSOR = "opt_tensor"         # const handle or nullptr
    MUT_TENSOR = "mut_tensor"         # mutable handle
    TENSOR_LIST = "tensor_list"       # no automatic conversion
    OPT_TENSOR_LIST = "opt_tensor_list"
    SCALAR = "scalar"                 # &diopiScalar_t
    OPT_SCALAR = "opt_scalar"         # const diopiScalar_t* (nullptr when absent)
    INT_LIST = "int_list"             # diopiSize_t
    SYMINT_LIST = "symint_list"       # diopiSize_t through a concrete int vector
    OPT_INT_LIST = "opt_int_list"     # diopiSize_t (empty when absent)
    SYMINT = "symint"                 # int64_t via expect_int()
    GENERATOR = "generator"           # diopiGeneratorHandle_t (default generator when absent)
    PLAIN = "plain"                   # passed as written
    # Call arguments that are not schema arguments.
    CTX = "ctx"                       # the DIOPI context
    FRESH = "fresh"                   # a return the wrapper allocates (alloc:)
    INS = "ins"                       # a local of the custom code, as a const handle
    OUTS = "outs"                     # a local of the custom code, as a mutable handle
    SIZES = "sizes"                   # an integer-vector local of the custom code, as diopiSize_t
    EXPR = "expr"                     # C++ text, passed as written

    @property
    def local(self) -> str | None:
        """The suffix of the local this kind declares for an argument, or None."""
        return LOCAL_SUFFIX.get(self)


HANDLE = "DiopiTensorHandle"
LOCAL_SUFFIX = {
    ArgKind.TENSOR: HANDLE, ArgKind.OPT_TENSOR: HANDLE, ArgKind.MUT_TENSOR: HANDLE,
    ArgKind.FRESH: HANDLE, ArgKind.INS: HANDLE, ArgKind.OUTS: HANDLE,
    ArgKind.SCALAR: "DiopiScalar", ArgKind.OPT_SCALAR: "DiopiScalarPtr",
    ArgKind.INT_LIST: "DiopiSize", ArgKind.SYMINT_LIST: "DiopiSize", ArgKind.OPT_INT_LIST: "DiopiSize",
    ArgKind.SIZES: "DiopiSize",
    ArgKind.GENERATOR: "DiopiGenerator",
}
# A second local some kinds declare: the storage behind an optional scalar's
# pointer, the concrete values of a SymInt list, the chosen generator.
AUX_SUFFIX = {ArgKind.OPT_SCALAR: "DiopiScalar", ArgKind.SYMINT_LIST: "Vector", ArgKind.GENERATOR: "Value"}
# Auxiliary locals that call expressions may name (DIPU names them so too).
NAMEABLE_AUX = (ArgKind.SYMINT_LIST,)

TENSOR_HANDLES = (ArgKind.TENSOR, ArgKind.OPT_TENSOR, ArgKind.MUT_TENSOR)
TENSOR_LIKE = TENSOR_HANDLES + (ArgKind.TENSOR_LIST, ArgKind.OPT_TENSOR_LIST)


def local_name(name: str, kind: ArgKind) -> str | None:
    suffix = kind.local
    return name + suffix if suffix else None
