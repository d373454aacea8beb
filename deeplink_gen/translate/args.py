"""How a value reaches a DIOPI call: one ArgKind per schema argument type or
call-only local, and the tables of what each kind means in C++: the locals
it declares (``selfDiopiTensorHandle``, ``alphaDiopiScalar``, ...), the code
that declares them and how the call passes the value. Plans, templates,
validation and the importer all read these from here, so a new kind's C++
is written in this file alone."""

from __future__ import annotations

import enum
from string import Template


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

# The C++ that declares a kind's locals before the DIOPI call, from the argument's
# $name, its $local and its $aux local; a kind without an entry declares nothing.
# An optional INS local is declared as an OPT_TENSOR.
_CONST_HANDLE = "  ::diopiConstTensorHandle_t $local = dipu::diopi_helper::toDiopiTensorHandle($name);\n"
_MUT_HANDLE = "  ::diopiTensorHandle_t $local = dipu::diopi_helper::toDiopiTensorHandle($name);\n"
_SIZE = "  ::diopiSize_t $local = dipu::diopi_helper::toDiopiSize($name);\n"
CONVERSION = {kind: Template(text) for kind, text in {
    ArgKind.TENSOR: _CONST_HANDLE,
    ArgKind.INS: _CONST_HANDLE,
    ArgKind.OPT_TENSOR:
        "  ::diopiConstTensorHandle_t $local = nullptr;\n"
        "  if ($name.has_value() && $name.value().defined()) {\n"
        "    $local = dipu::diopi_helper::toDiopiTensorHandle($name.value());\n"
        "  }\n",
    ArgKind.MUT_TENSOR: _MUT_HANDLE, ArgKind.FRESH: _MUT_HANDLE, ArgKind.OUTS: _MUT_HANDLE,
    ArgKind.SCALAR: "  ::diopiScalar_t $local = dipu::diopi_helper::toDiopiScalar($name);\n",
    ArgKind.OPT_SCALAR:
        "  ::diopiScalar_t $aux{};\n"
        "  const ::diopiScalar_t* $local = nullptr;\n"
        "  if ($name.has_value()) {\n"
        "    $aux = dipu::diopi_helper::toDiopiScalar($name.value());\n"
        "    $local = &$aux;\n"
        "  }\n",
    ArgKind.INT_LIST: _SIZE, ArgKind.OPT_INT_LIST: _SIZE, ArgKind.SIZES: _SIZE,
    ArgKind.SYMINT_LIST:
        "  [[maybe_unused]] c10::DimVector $aux;\n"
        "  for (const c10::SymInt& v : $name) {\n"
        "    $aux.push_back(v.expect_int());\n"
        "  }\n"
        "  [[maybe_unused]] ::diopiSize_t $local{$aux.data(), static_cast<int64_t>($aux.size())};\n",
    ArgKind.GENERATOR:
        "  at::Generator $aux = ($name.has_value() && $name.value().defined())\n"
        "      ? $name.value() : dipu::getDefaultDIPUGenerator();\n"
        "  ::diopiGeneratorHandle_t $local = dipu::diopi_helper::toDiopiGeneratorHandle($aux);\n",
}.items()}
# How the DIOPI call passes a kind's value, where that is not simply its local
# (or, for a kind without a local, its name or C++ text as written).
PASSED = {ArgKind.SCALAR: Template("&$local"), ArgKind.SYMINT: Template("$name.expect_int()")}

TENSOR_HANDLES = (ArgKind.TENSOR, ArgKind.OPT_TENSOR, ArgKind.MUT_TENSOR)
TENSOR_LIKE = TENSOR_HANDLES + (ArgKind.TENSOR_LIST, ArgKind.OPT_TENSOR_LIST)


def local_name(name: str, kind: ArgKind) -> str | None:
    suffix = kind.local
    return name + suffix if suffix else None


def aux_name(name: str, kind: ArgKind) -> str | None:
    suffix = AUX_SUFFIX.get(kind)
    return name + suffix if suffix else None


def declaration(name: str, kind: ArgKind, optional: bool = False) -> str:
    """The C++ lines declaring the locals of *name*, a value of *kind* (*optional*: an INS
    local that may be empty), before the DIOPI call."""
    form = CONVERSION[ArgKind.OPT_TENSOR if kind is ArgKind.INS and optional else kind]
    return form.substitute(name=name, local=local_name(name, kind), aux=aux_name(name, kind))


def passed(name: str, kind: ArgKind) -> str:
    """How the DIOPI call passes *name*, a value of *kind*."""
    local = local_name(name, kind)
    if kind in PASSED:
        return PASSED[kind].substitute(name=name, local=local)
    return local or name
