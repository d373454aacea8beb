"""DIOPI functions as ATen calls, stated as data (host_diopi/aten_calls.yaml):
the functions of the host DIOPI library that no catalog entry turns back into
its op, and the reasons for the functions it leaves out.

Most DIOPI functions differ from an ATen op only in how a value is spelled
(an enum for an int, a C string for a string view, a pointer for an optional)
or in a value DIOPI leaves to its caller's tensors (keepdim is whether the
output keeps the input's rank). The file names, for each function, the op and
which DIOPI parameter (or fixed value) each of the op's arguments is; the
conversion of each parameter follows from its DIOPI type and the ATen type it
meets (CONVERSIONS, written once here), so a file entry never carries C++.
Every entry is checked against the torch schema and the DIOPI prototype when
the file is read: an unknown op, argument or parameter, a pair of types
without a conversion, or a parameter used twice or not at all is an error at
the entry's file:line."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path

from deeplink_gen import yamlfile
from deeplink_gen.errors import Diagnostic, UserError
from deeplink_gen.interfaces.aten import function_schema
from deeplink_gen.model import OpTable, Prototype, Prototypes
from deeplink_gen.translate.args import ArgKind
from deeplink_gen.translate.signature import signature_of

CALLS = Path(__file__).resolve().parent.parent / "host_diopi" / "aten_calls.yaml"
TENSOR_HANDLES = frozenset({"diopiTensorHandle_t", "diopiConstTensorHandle_t"})


class Glue(enum.Enum):
    """How a DIOPI value becomes the ATen argument it meets, where their types differ."""

    NONE = "none"                  # as the ATen argument's kind converts
    REDUCTION = "reduction"        # diopiReduction_t -> int (the same numbering)
    STRING = "string"              # const char* -> c10::string_view
    OPT_STRING = "opt_string"      # const char* (null: absent) -> c10::optional<c10::string_view>
    ROUND_MODE = "round_mode"      # diopiRoundMode_t -> "trunc", "floor" or absent
    POINTEE = "pointee"            # const T* (null: absent) -> c10::optional<T>, for int64_t, double, bool
    POINTEE_OR = "pointee_or"      # const T* (null: a value the file gives) -> c10::optional<T> that holds one
    NUMBER = "number"              # double or int64_t -> at::Scalar
    DTYPE = "dtype"                # diopiDtype_t -> at::ScalarType
    OPT_SIZE = "opt_size"          # diopiSize_t* (null: absent) -> at::OptionalSymIntArrayRef
    LITERAL = "literal"            # a value the file fixes
    SAME_RANK = "same_rank"        # keepdim: the first tensor has the rank of the second
    DTYPE_OF = "dtype_of"          # the dtype of a tensor parameter
    CLASSES_LAST = "classes_last"  # a loss's (N, C, d1, ..., dk) as the (N*d1*...*dk, C) of an op over (N, C)
    FLAT = "flat"                  # a loss's target or gradient (N, d1, ..., dk) as one dimension


class Store(enum.Enum):
    """How a return of a functional op reaches the caller's tensor."""

    COPY = "copy"                  # as it is
    STATISTIC = "statistic"        # in the caller's shape (reshape:); none when the op computes none
    CLASSES_LAST = "classes_last"  # back from the classes-last form into (N, C, d1, ..., dk) (classes_last:)


# (DIOPI parameter type, ATen argument type) -> the glue between them. A tensor handle, scalar,
# size or generator meets the ATen argument its kind converts (Glue.NONE) and is not listed.
CONVERSIONS = {
    ("diopiReduction_t", "int"): Glue.REDUCTION,
    ("const char*", "str"): Glue.STRING,
    ("const char*", "str?"): Glue.OPT_STRING,
    ("diopiRoundMode_t", "str?"): Glue.ROUND_MODE,
    ("const int64_t*", "int?"): Glue.POINTEE,
    ("const double*", "float?"): Glue.POINTEE,
    ("const bool*", "bool?"): Glue.POINTEE,
    ("double", "Scalar"): Glue.NUMBER,
    ("int64_t", "Scalar"): Glue.NUMBER,
    ("diopiDtype_t", "ScalarType"): Glue.DTYPE,
    ("diopiDtype_t", "ScalarType?"): Glue.DTYPE,
    ("diopiSize_t*", "SymInt[]?"): Glue.OPT_SIZE,
}
# Plain C++ values that pass to the ATen types they meet as they are.
PLAIN = {
    "int64_t": {"int", "SymInt", "int?", "SymInt?"},
    "bool": {"bool", "bool?"},
    "double": {"float", "float?"},
    "float": {"float", "float?"},
}
# ATen argument kinds each kind of DIOPI handle converts to.
HANDLE_KINDS = {
    "diopiTensorHandle_t": {ArgKind.TENSOR, ArgKind.OPT_TENSOR, ArgKind.MUT_TENSOR},
    "diopiConstTensorHandle_t": {ArgKind.TENSOR, ArgKind.OPT_TENSOR},
    "const diopiScalar_t*": {ArgKind.SCALAR, ArgKind.OPT_SCALAR},
    "diopiScalar_t*": {ArgKind.SCALAR, ArgKind.OPT_SCALAR},
    "diopiSize_t": {ArgKind.INT_LIST, ArgKind.SYMINT_LIST, ArgKind.OPT_INT_LIST},
    "const diopiSize_t": {ArgKind.INT_LIST, ArgKind.SYMINT_LIST, ArgKind.OPT_INT_LIST},
    "diopiGeneratorHandle_t": {ArgKind.GENERATOR},
}
# ATen types a fixed value may be given for, by the YAML types that spell it.
LITERALS = {bool: {"bool", "bool?"}, int: {"int", "int?", "SymInt", "float", "float?"},
            float: {"float", "float?"}, str: {"str", "str?"}}


@dataclass(frozen=True)
class CallArg:
    """One ATen argument of a stated call."""

    aten: str            # the argument's name in the schema
    kind: ArgKind        # its kind
    glue: Glue
    params: tuple[str, ...] = ()     # the DIOPI parameters it is made from
    value: object = None             # Glue.LITERAL: the value (None: absent)


@dataclass(frozen=True)
class StatedCall:
    """A DIOPI function and the ATen call the file states for it."""

    name: str
    op: str
    ops_struct: str
    args: tuple[CallArg, ...]                   # in schema order
    returns: tuple[str | None, ...]             # the DIOPI parameter each return is copied into (None: dropped)
    stores: dict[str, Store] = field(default_factory=dict)     # returns not copied as they are


@dataclass(frozen=True)
class Calls:
    functions: dict[str, StatedCall]
    not_implemented: dict[str, str]     # DIOPI function -> why
    headers: dict[str, str]             # DIOPI header -> why none of its other functions is implemented


def _type(p) -> str:
    return " ".join(p.type.split())


def _glue(ptype: str, aten_type: str, kind: ArgKind) -> Glue | None:
    """The glue from a DIOPI parameter of *ptype* to an ATen argument of *aten_type*, or None."""
    if kind in HANDLE_KINDS.get(ptype, ()):
        return Glue.NONE
    if aten_type in PLAIN.get(ptype, ()):
        return Glue.NONE
    return CONVERSIONS.get((ptype, aten_type))


class _Reader:
    """Checks one file's entries, collecting every problem with its position."""

    def __init__(self, doc: yamlfile.Document, table: OpTable, protos: Prototypes):
        self.doc, self.table, self.protos = doc, table, protos
        self.problems: list[Diagnostic] = []

    def fail(self, path: tuple, message: str, key: bool = False) -> None:
        self.problems.append(Diagnostic(self.doc.loc(path, key=key), ".".join(str(p) for p in path), message))

    def function(self, name: str, raw) -> StatedCall | None:
        where = ("functions", name)
        proto = self.protos.get(name)
        if proto is None:
            return self.fail(where, f"{name} is not a function of DIOPI {self.protos.commit}", key=True)
        if not isinstance(raw, dict) or set(raw) - {"op", "args", "returns", *_STORES} or "op" not in raw:
            return self.fail(where, "expected a mapping of op, args, and optionally returns, reshape and classes_last")
        op = self.table.get(str(raw["op"]))
        if op is None or op.helper:
            return self.fail(where + ("op",), f"{raw['op']} is not an op of {self.table.what}")
        if op.cpu_kernel is False:
            return self.fail(where + ("op",), f"torch has no CPU kernel for {op.name}")
        schema = function_schema(op)
        types = {a.name: str(a.type) for a in schema.arguments.flat_all}
        kinds = {p.name: p.kind for p in signature_of(op).params}
        given = raw.get("args") or {}
        for aten in given:
            if aten not in kinds:
                self.fail(where + ("args", aten), f"{op.name} has no argument {aten}", key=True)
        used: dict[str, str] = {}
        args = tuple(self.arg(where + ("args", a), proto, a, kinds[a], types[a], given.get(a, _ABSENT), used)
                     for a in kinds)
        returns = self.returns(where, proto, op, schema, raw.get("returns") or [], used)
        for p in proto.params:
            if p.type != "diopiContextHandle_t" and p.name not in used:
                self.fail(where, f"{name}'s parameter {p.name} is used by no argument or return")
        stores: dict[str, Store] = {}
        for key, store in _STORES.items():
            for r in raw.get(key) or ():
                if r not in returns or r in stores:
                    self.fail(where + (key,), f"{r} is not one of the returns, or is stored twice")
                stores[r] = store
        return StatedCall(name, op.name, schema.name.unambiguous_name(), args, returns, stores)

    def arg(self, where, proto: Prototype, aten: str, kind: ArgKind, aten_type: str, value, used) -> CallArg:
        if value is _ABSENT:
            if aten_type.endswith("?"):
                return CallArg(aten, kind, Glue.LITERAL)
            self.fail(where[:-1], f"the argument {aten} ({aten_type}) is not given")
            return CallArg(aten, kind, Glue.LITERAL)
        if isinstance(value, dict):
            return self.derived(where, proto, aten, kind, aten_type, value, used)
        if value is None or not isinstance(value, str):
            if value is not None and aten_type not in LITERALS.get(type(value), ()):
                self.fail(where, f"{value!r} is not a value of {aten}'s type {aten_type}")
            if value is None and not aten_type.endswith("?"):
                self.fail(where, f"{aten} ({aten_type}) cannot be absent")
            return CallArg(aten, kind, Glue.LITERAL, value=value)
        param = proto.param(value)
        if param is None:
            self.fail(where, f"{proto.name} has no parameter {value}")
            return CallArg(aten, kind, Glue.LITERAL)
        if value in used:
            self.fail(where, f"the parameter {value} is used twice ({used[value]} and {aten})")
        used[value] = aten
        glue = _glue(_type(param), aten_type, kind)
        if glue is None:
            self.fail(where, f"no conversion from {value} ({_type(param)}) to {aten} ({aten_type})")
            glue = Glue.NONE
        return CallArg(aten, kind, glue, (value,))

    def derived(self, where, proto: Prototype, aten: str, kind: ArgKind, aten_type: str, value: dict,
                used: dict) -> CallArg:
        if set(value) == {"value"}:
            if aten_type not in LITERALS[str]:
                self.fail(where, f"{aten} ({aten_type}) takes no string")
            return CallArg(aten, kind, Glue.LITERAL, value=str(value["value"]))
        if set(value) == {"same_rank"} and aten_type == "bool":
            params = tuple(value["same_rank"] or ())
            if len(params) != 2 or any(proto.param(p) is None or _type(proto.param(p)) not in TENSOR_HANDLES
                                       for p in params):
                self.fail(where, f"same_rank names two tensor parameters of {proto.name}")
            return CallArg(aten, kind, Glue.SAME_RANK, params)
        if set(value) == {"dtype_of"} and aten_type in ("ScalarType", "ScalarType?"):
            param = proto.param(str(value["dtype_of"]))
            if param is None or _type(param) not in TENSOR_HANDLES:
                self.fail(where, f"dtype_of names a tensor parameter of {proto.name}")
            return CallArg(aten, kind, Glue.DTYPE_OF, (str(value["dtype_of"]),))
        if set(value) == {"param", "absent"}:
            return self.pointee_or(where, proto, aten, kind, aten_type, value, used)
        if len(value) == 1 and next(iter(value)) in _TENSOR_FORMS and kind is ArgKind.TENSOR:
            form, name = next(iter(value.items()))
            param = proto.param(str(name))
            if param is None or _type(param) not in TENSOR_HANDLES:
                self.fail(where, f"{form} names a tensor parameter of {proto.name}")
            elif name in used:
                self.fail(where, f"the parameter {name} is used twice ({used[name]} and {aten})")
            used[str(name)] = aten
            return CallArg(aten, kind, _TENSOR_FORMS[form], (str(name),))
        self.fail(where, "expected a parameter name, a value, {value: TEXT}, {same_rank: [TENSOR, TENSOR]} (bool), "
                         "{dtype_of: TENSOR} (ScalarType), {param: POINTER, absent: VALUE}, or "
                         "{classes_last: TENSOR} or {flat: TENSOR} (Tensor)")
        return CallArg(aten, kind, Glue.LITERAL)

    def pointee_or(self, where, proto: Prototype, aten: str, kind: ArgKind, aten_type: str, value: dict,
                   used: dict) -> CallArg:
        """{param: P, absent: V}: a const T* parameter whose null means V, for an op that needs a value
        (an optional argument ATen's kernel asserts is given)."""
        name, absent = str(value["param"]), value["absent"]
        param = proto.param(name)
        if param is None or _glue(_type(param), aten_type, kind) is not Glue.POINTEE:
            self.fail(where, f"param names a pointer parameter of {proto.name} that converts to {aten} ({aten_type})")
        elif absent is None or aten_type not in LITERALS.get(type(absent), ()):
            self.fail(where, f"absent: {absent!r} is not a value of {aten}'s type {aten_type}")
        if name in used:
            self.fail(where, f"the parameter {name} is used twice ({used[name]} and {aten})")
        used[name] = aten
        return CallArg(aten, kind, Glue.POINTEE_OR, (name,), absent)

    def returns(self, where, proto: Prototype, op, schema, raw, used) -> tuple[str | None, ...]:
        fresh = [r for r in schema.returns if not (r.annotation and r.annotation.is_write)]
        if not raw:
            return ()
        if len(raw) != len(fresh) or len(fresh) != len(schema.returns):
            self.fail(where + ("returns",), f"{op.name} returns {len(schema.returns)} new tensors: name a "
                                            f"parameter (or null) for each")
            return ()
        for i, p in enumerate(raw):
            if p is None:
                continue
            if proto.param(p) is None or _type(proto.param(p)) != "diopiTensorHandle_t":
                self.fail(where + ("returns", i), f"{p} is not an output tensor of {proto.name}")
            elif p in used:
                self.fail(where + ("returns", i), f"the parameter {p} is used twice")
            used[p] = f"return {i}"
        return tuple(raw)


_ABSENT = object()
_TENSOR_FORMS = {"classes_last": Glue.CLASSES_LAST, "flat": Glue.FLAT}
_STORES = {"reshape": Store.STATISTIC, "classes_last": Store.CLASSES_LAST}


def stated_calls(table: OpTable, protos: Prototypes, path: Path = CALLS) -> Calls:
    """The file's calls, checked against *table* and *protos*; UserError lists every problem."""
    doc = yamlfile.load(path, display=f"deeplink_gen/host_diopi/{path.name}")
    data = doc.data or {}
    reader = _Reader(doc, table, protos)
    functions = {}
    for name, raw in (data.get("functions") or {}).items():
        call = reader.function(name, raw)
        if call is not None:
            functions[name] = call
    not_implemented = {}
    for name, why in (data.get("not_implemented") or {}).items():
        if protos.get(name) is None:
            reader.fail(("not_implemented", name), f"{name} is not a function of DIOPI {protos.commit}", key=True)
        elif name in functions:
            reader.fail(("not_implemented", name), f"{name} is stated as a call too", key=True)
        not_implemented[name] = str(why)
    headers = {str(h): str(why) for h, why in (data.get("headers") or {}).items()}
    if reader.problems:
        raise UserError(reader.problems)
    return Calls(functions, not_implemented, headers)
