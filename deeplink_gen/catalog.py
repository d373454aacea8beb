"""Read catalog files (catalog/*.yaml) into the model and check what a schema
cannot: ops exist in the installed torch, calls name known arguments, every
fresh return has an allocation."""

from __future__ import annotations

import re

from deeplink_gen import aten
from deeplink_gen.callexpr import CallSyntaxError, parse_call, referenced_names
from deeplink_gen.errors import Diagnostics, did_you_mean, key_path
from deeplink_gen.model import Catalog, CatalogEntry, DiopiCall, Located, TorchGate
from deeplink_gen.signature import Conv, signature_of
from deeplink_gen.yamlload import Document

_RET_NAMES = re.compile(r"\s*->.*$")


def _located(doc: Document, where: tuple, raw: dict, key: str):
    if key not in raw:
        return None
    return Located(raw[key], doc.loc(where + (key,)))


def parse_entry(doc: Document, op: str, raw: dict, diags: Diagnostics) -> CatalogEntry | None:
    where = ("ops", op)
    loc = doc.loc(where, key=True)
    try:
        function, args = parse_call(raw["call"])
    except CallSyntaxError as exc:
        diags.add(doc.loc(where + ("call",)), key_path(where + ("call",)), str(exc))
        return None
    call = DiopiCall(function, args, doc.loc(where + ("call",)))
    torch_gate = None
    if "torch" in raw:
        torch_gate = TorchGate.parse(raw["torch"], doc.loc(where + ("torch",)))
    return CatalogEntry(
        op=op, loc=loc, call=call,
        schema_text=_located(doc, where, raw, "schema"),
        alloc=tuple(sorted((raw.get("alloc") or {}).items())),
        enabled=_located(doc, where, raw, "enabled"),
        autocompare=_located(doc, where, raw, "autocompare"),
        fallback_to_cpu=_located(doc, where, raw, "fallback_to_cpu"),
        device_guard=_located(doc, where, raw, "device_guard"),
        torch=torch_gate,
        doc=raw.get("doc", ""),
    )


def _normalise(schema: str) -> str:
    """Compare schemas ignoring return names, SymInt vs int and spacing."""
    text = schema.strip().removeprefix("aten::")
    head, _, ret = text.partition("->")
    ret = re.sub(r"(Tensor(?:\([a-z]!?\))?(?:\[\])?)\s+[A-Za-z_]\w*", r"\1", ret)
    text = head + "->" + ret
    text = text.replace("SymInt", "int")
    return re.sub(r"\s+", "", text)


def check_entry(doc: Document, entry: CatalogEntry, diags: Diagnostics) -> None:
    where = ("ops", entry.op)
    op = aten.lookup(entry.op)
    if op is None:
        diags.add(entry.loc, key_path(where),
                  f"'{entry.op}' is not an op of the installed torch"
                  f"{did_you_mean(entry.op, aten.op_index())}")
        return
    sig = signature_of(op)
    if entry.schema_text is not None and _normalise(entry.schema_text.value) != _normalise(op.schema):
        diags.add(entry.schema_text.loc, key_path(where + ("schema",)),
                  f"schema differs from the installed torch's: {op.schema}")
    params = {p.name: p for p in sig.params}
    fresh = [r.name for r in sig.fresh_returns]
    known = set(params) | set(fresh) | {"ctx"}
    call = entry.call
    if not call.function.startswith("diopi"):
        diags.add(call.loc, key_path(where + ("call",)), f"'{call.function}' is not a DIOPI function (diopi...)")
    if not call.args or call.args[0].text != "ctx":
        diags.add(call.loc, key_path(where + ("call",)), "the first argument of a DIOPI call must be 'ctx'")
    for arg in call.args:
        names = referenced_names(arg.text)
        for name in names:
            if name not in known:
                diags.add(call.loc, key_path(where + ("call",)),
                          f"'{name}' is not an argument of {entry.op}{did_you_mean(name, known)}"
                          f" (arguments: {', '.join(sorted(known - {'ctx'}))})")
    for name, _expr in entry.alloc:
        if name not in fresh:
            what = f"fresh returns are: {', '.join(fresh)}" if fresh else "the op returns no fresh tensor"
            diags.add(doc.loc(where + ("alloc", name), key=True), key_path(where + ("alloc", name)),
                      f"'{name}' is not a fresh return of {entry.op} ({what})")
    for ret in sig.fresh_returns:
        if ret.is_tensor and entry.alloc_for(ret.name) is None:
            diags.add(entry.loc, key_path(where + ("alloc",)),
                      f"{entry.op} returns a new tensor '{ret.name}': say how to allocate it under alloc:")
    guard = entry.device_guard.value if entry.device_guard else None
    if isinstance(guard, str):
        param = params.get(guard)
        if param is None or param.conv not in (Conv.TENSOR, Conv.MUT_TENSOR, Conv.OPT_TENSOR):
            diags.add(entry.device_guard.loc, key_path(where + ("device_guard",)),
                      f"'{guard}' is not a tensor argument of {entry.op}")


def load_catalog(docs: list[Document], diags: Diagnostics) -> Catalog:
    entries: list[CatalogEntry] = []
    first_seen: dict[str, CatalogEntry] = {}
    for doc in docs:
        for op, raw in (doc.data.get("ops") or {}).items():
            entry = parse_entry(doc, op, raw, diags)
            if entry is None:
                continue
            if op in first_seen:
                diags.add(entry.loc, key_path(("ops", op)),
                          f"'{op}' is already defined at {first_seen[op].loc}")
                continue
            first_seen[op] = entry
            check_entry(doc, entry, diags)
            entries.append(entry)
    return Catalog(tuple(entries), tuple(d.path for d in docs))
