"""A vendor's dtype and layout section: which DIOPI dtypes its kernels take,
how unsupported ones are converted, and which memory layouts it prefers.

Precedence is common < per function < per tensor argument, merged per
source dtype: a function rule for float64 replaces the common float64 rule
and keeps the common int64 rule. The rendered convert_config.yaml spells
out the merged rules, so DIOPI's own generator (whose levels replace each
other wholesale) computes the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.errors import Diagnostics, Loc, did_you_mean, key_path
from deeplink_gen.model import Located
from deeplink_gen.yamlload import Document

# DIOPI's diopiDtype_t, in enum order (values 0..16).
DTYPES = (
    "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float16", "float32", "float64", "bool", "bfloat16", "tfloat32",
    "complex32", "complex64", "complex128",
)
# What DIOPI's adaptor generator can read in convert_config.yaml (no bfloat16/tfloat32).
CONVERT_CONFIG_DTYPES = frozenset(DTYPES) - {"bfloat16", "tfloat32"}

# Layout token -> diopiMemoryFormat_t enumerator.
LAYOUTS = {
    "NCHW": "Contiguous", "NCL": "Contiguous", "NCDHW": "Contiguous",
    "NHWC": "ChannelsLast", "NLC": "ChannelsLast1d", "NDHWC": "ChannelsLast3d",
    "ND": "Preserve",
}
_CONTIGUOUS = ("NCHW", "NCL", "NCDHW")
_CHANNELS_LAST = ("NLC", "NHWC", "NDHWC")

# The adaptor's own conversion primitives; converting their tensors would recurse.
PRIMITIVES = ("diopiCastDtype", "diopiCopyInp")


@dataclass(frozen=True)
class Rule:
    source: str
    target: str
    loc: Loc
    level: str          # "common", "function", "tensor"


@dataclass(frozen=True)
class FunctionDtypes:
    function: str
    loc: Loc
    convert: tuple[Rule, ...] = ()
    tensors: tuple[tuple[str, Loc, tuple[Rule, ...]], ...] = ()


@dataclass(frozen=True)
class FunctionLayouts:
    function: str
    loc: Loc
    prefer: Located[tuple[str, ...]] | None = None
    tensors: tuple[tuple[str, Located[tuple[str, ...]]], ...] = ()
    contiguous: tuple[Located[str], ...] = ()


@dataclass(frozen=True)
class Conversions:
    supported: Located[tuple[str, ...]] | None
    convert: tuple[Rule, ...]
    dtype_functions: tuple[FunctionDtypes, ...]
    default_layout: Located[str] | None
    layout_functions: tuple[FunctionLayouts, ...]

    def dtypes_of(self, function: str) -> FunctionDtypes | None:
        return next((f for f in self.dtype_functions if f.function == function), None)

    def layouts_of(self, function: str) -> FunctionLayouts | None:
        return next((f for f in self.layout_functions if f.function == function), None)

    def named_functions(self) -> list[str]:
        return sorted({f.function for f in self.dtype_functions} | {f.function for f in self.layout_functions})

    # ---- effective settings

    def rules(self, function: str, tensor: str | None = None) -> tuple[Rule, ...]:
        """Merged rules for a tensor of *function* (or the function level), sorted by source."""
        merged = {r.source: r for r in self.convert}
        f = self.dtypes_of(function)
        if f is not None:
            merged.update({r.source: r for r in f.convert})
            if tensor is not None:
                for name, _loc, rules in f.tensors:
                    if name == tensor:
                        merged.update({r.source: r for r in rules})
        return tuple(merged[k] for k in sorted(merged, key=DTYPES.index))

    def layouts(self, function: str, tensor: str | None = None) -> tuple[str, ...]:
        f = self.layouts_of(function)
        if f is not None:
            if tensor is not None:
                for name, located in f.tensors:
                    if name == tensor:
                        return located.value
                if any(c.value == tensor for c in f.contiguous):
                    return ("NCHW",)
            if f.prefer is not None:
                return f.prefer.value
        return (self.default_layout.value,) if self.default_layout is not None else ()

    def function_layouts(self, function: str) -> tuple[str, ...]:
        """The function-level layout list (what convert_config.yaml and DIPU see)."""
        f = self.layouts_of(function)
        if f is not None and f.prefer is not None:
            return f.prefer.value
        return ()


EMPTY = Conversions(None, (), (), None, ())


def _rules(doc: Document, where: tuple, raw: dict, level: str) -> tuple[Rule, ...]:
    return tuple(Rule(src, dst, doc.loc(where + (src,), key=True), level)
                 for src, dst in sorted((raw or {}).items(), key=lambda kv: DTYPES.index(kv[0])))


def parse_conversions(doc: Document) -> Conversions:
    """Build the model from a schema-valid vendor document."""
    raw_d = doc.data.get("dtypes") or {}
    raw_l = doc.data.get("layouts") or {}
    supported = None
    if "supported" in raw_d:
        supported = Located(tuple(raw_d["supported"]), doc.loc(("dtypes", "supported")))
    dfuncs = []
    for fn, body in sorted((raw_d.get("functions") or {}).items()):
        where = ("dtypes", "functions", fn)
        tensors = tuple(
            (t, doc.loc(where + ("tensors", t), key=True), _rules(doc, where + ("tensors", t), r, "tensor"))
            for t, r in sorted((body.get("tensors") or {}).items()))
        dfuncs.append(FunctionDtypes(fn, doc.loc(where, key=True),
                                     _rules(doc, where + ("convert",), body.get("convert"), "function"), tensors))
    lfuncs = []
    for fn, body in sorted((raw_l.get("functions") or {}).items()):
        where = ("layouts", "functions", fn)
        if isinstance(body, list):
            body, prefer_where = {"prefer": body}, where
        else:
            prefer_where = where + ("prefer",)
        prefer = Located(tuple(body["prefer"]), doc.loc(prefer_where)) if "prefer" in body else None
        tensors = tuple((t, Located(tuple(v), doc.loc(where + ("tensors", t), key=True)))
                        for t, v in sorted((body.get("tensors") or {}).items()))
        contiguous = tuple(Located(t, doc.loc(where + ("contiguous", i)))
                           for i, t in enumerate(body.get("contiguous") or ()))
        lfuncs.append(FunctionLayouts(fn, doc.loc(where, key=True), prefer, tensors, contiguous))
    default = Located(raw_l["default"], doc.loc(("layouts", "default"))) if "default" in raw_l else None
    return Conversions(supported, _rules(doc, ("dtypes", "convert"), raw_d.get("convert"), "common"),
                       tuple(dfuncs), default, tuple(lfuncs))


def check_conversions(conv: Conversions, protos, diags: Diagnostics) -> None:
    """Semantic checks: functions and tensors exist, targets are supported, no chains or cycles."""
    from deeplink_gen.diopi_api import Kind

    supported = set(conv.supported.value) if conv.supported is not None else set(DTYPES)

    def check_rule(rule: Rule, parts: tuple) -> None:
        if rule.source == rule.target:
            diags.add(rule.loc, key_path(parts + (rule.source,)), f"converts {rule.source} to itself")
        elif rule.target not in supported:
            diags.add(rule.loc, key_path(parts + (rule.source,)),
                      f"converts to {rule.target}, which is not in dtypes.supported "
                      f"({', '.join(d for d in DTYPES if d in supported)})")

    for r in conv.convert:
        check_rule(r, ("dtypes", "convert"))

    def check_function(fn: str, loc: Loc, section: str):
        p = protos.get(fn)
        if p is None:
            diags.add(loc, key_path((section, "functions", fn)),
                      f"'{fn}' is not a DIOPI function{did_you_mean(fn, protos.names())}")
            return None
        if fn in PRIMITIVES:
            diags.add(loc, key_path((section, "functions", fn)),
                      f"{fn} is a conversion primitive of the adaptor; its tensors cannot be converted")
            return None
        if p.allocates:
            ptr = next(x.name for x in p.params if x.kind == Kind.HANDLE_PTR)
            diags.add(loc, key_path((section, "functions", fn)),
                      f"{fn} fills in tensor handles ('{ptr}'); the adaptor passes it through unconverted")
            return None
        return p

    def check_tensor(p, name: str, loc: Loc, parts: tuple) -> bool:
        param = p.param(name)
        if param is None or not param.is_tensor:
            tensors = p.tensor_names()
            diags.add(loc, key_path(parts), f"'{name}' is not a tensor argument of {p.name}"
                      f"{did_you_mean(name, tensors)} (tensors: {', '.join(tensors)})")
            return False
        return True

    for f in conv.dtype_functions:
        parts = ("dtypes", "functions", f.function)
        p = check_function(f.function, f.loc, "dtypes")
        for r in f.convert:
            check_rule(r, parts + ("convert",))
        for t, tloc, rules in f.tensors:
            if p is not None:
                check_tensor(p, t, tloc, parts + ("tensors", t))
            for r in rules:
                check_rule(r, parts + ("tensors", t))
    for f in conv.layout_functions:
        parts = ("layouts", "functions", f.function)
        p = check_function(f.function, f.loc, "layouts")
        if p is None:
            continue
        named = {}
        for t, located in f.tensors:
            check_tensor(p, t, located.loc, parts + ("tensors", t))
            named[t] = located
        for c in f.contiguous:
            if check_tensor(p, c.value, c.loc, parts + ("contiguous",)) and c.value in named:
                diags.add(c.loc, key_path(parts + ("contiguous",)),
                          f"'{c.value}' also has a layout under tensors (at {named[c.value].loc}); keep one")
    # Chains and cycles, on every merged rule set that can apply.
    seen: set[tuple] = set()
    scopes: list[tuple[str | None, str | None, tuple]] = [(None, None, ("dtypes", "convert"))]
    for f in conv.dtype_functions:
        scopes.append((f.function, None, ("dtypes", "functions", f.function)))
        scopes.extend((f.function, t, ("dtypes", "functions", f.function, "tensors", t)) for t, _l, _r in f.tensors)
    for fn, tensor, parts in scopes:
        rules = conv.rules(fn, tensor) if fn is not None else conv.convert
        by_source = {r.source: r for r in rules}
        for r in rules:
            again = by_source.get(r.target)
            if again is None or r.source == r.target:
                continue
            culprit = max(r, again, key=lambda x: ("common", "function", "tensor").index(x.level))
            key = (culprit.loc, r.source, r.target)
            if key in seen:
                continue
            seen.add(key)
            kind = "a cycle" if again.target == r.source else "a chain"
            diags.add(culprit.loc, key_path(parts),
                      f"rules {r.source}->{r.target} ({r.loc}) and {again.source}->{again.target} ({again.loc}) "
                      f"form {kind}; every conversion must end at a supported dtype in one step")


def preferred_memory_format(vendor, diopi_function: str) -> str | None:
    """What DIPU's memory-format placeholders become for *diopi_function*:
    "contiguous", "channels_last", "preserve", or None when the vendor states
    no layout for it (the placeholder keeps its default)."""
    conv: Conversions = getattr(vendor, "conversions", None) or EMPTY
    chosen = conv.function_layouts(diopi_function)
    if not chosen and conv.default_layout is not None:
        chosen = (conv.default_layout.value,)
    if not chosen:
        return None
    if any(t in _CONTIGUOUS for t in chosen):
        return "contiguous"
    if any(t in _CHANNELS_LAST for t in chosen):
        return "channels_last"
    return "preserve"
