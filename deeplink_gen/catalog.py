"""Read catalog files (catalog/*.yaml) into the model and check what a schema
cannot: ops exist in the installed torch, calls name known arguments, every
fresh return has an allocation."""

from __future__ import annotations

import re

from torchgen.model import SchemaKind

from deeplink_gen import aten, diopi_api
from deeplink_gen.callexpr import CallSyntaxError, parse_call, referenced_names
from deeplink_gen.errors import Diagnostics, did_you_mean, key_path
from deeplink_gen.model import Autograd, Catalog, CatalogEntry, DiopiCall, Located, TorchGate
from deeplink_gen.signature import Conv, derived_names, signature_of
from deeplink_gen.yamlload import Document

_RET_NAMES = re.compile(r"\s*->.*$")


def _located(doc: Document, where: tuple, raw: dict, key: str):
    if key not in raw:
        return None
    return Located(raw[key], doc.loc(where + (key,)))


def parse_entry(doc: Document, op: str, raw: dict, diags: Diagnostics,
                where: tuple | None = None) -> CatalogEntry | None:
    """*where*: the key path of the entry (ops.<op> in a catalog file,
    ops.<op>.replace in a vendor file)."""
    where = where or ("ops", op)
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
    code = tuple((hook, Located(text, doc.loc(where + ("code", hook))))
                 for hook, text in sorted((raw.get("code") or {}).items()))
    autograd = None
    if "autograd" in raw:
        ag, at = raw["autograd"], where + ("autograd",)
        autograd = Autograd(
            loc=doc.loc(at, key=True),
            backward=Located(ag["backward"], doc.loc(at + ("backward",))),
            forward=Located(ag["forward"], doc.loc(at + ("forward",))) if "forward" in ag else None,
            saved=tuple(ag.get("saved") or ()),
            forward_code=ag.get("forward_code", ""),
            grad_code=ag.get("grad_code", ""),
            return_code=ag.get("return_code", ""),
            wrapper_return=ag.get("wrapper_return", ""),
            forward_args=tuple(ag.get("forward_args") or ()),
        )
    return CatalogEntry(
        op=op, loc=loc, call=call,
        code=code,
        locals=tuple(raw.get("locals") or ()),
        ins=tuple((n.rstrip("?"), n.endswith("?")) for n in raw.get("ins") or ()),
        outs=tuple(raw.get("outs") or ()),
        no_device_check=tuple(raw.get("no_device_check") or ()),
        dummy_call=_located(doc, where, raw, "dummy_call"),
        custom_fallback=_located(doc, where, raw, "custom_fallback"),
        force_fallback=_located(doc, where, raw, "force_fallback"),
        register=_located(doc, where, raw, "register"),
        autograd=autograd,
        sizes=tuple(raw.get("sizes") or ()),
        returns=tuple(raw.get("returns") or ()),
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


def is_helper(entry: CatalogEntry) -> bool:
    """A DIPU-private helper op: not an op of torch, defined by its schema and
    never registered (its wrapper is called by other wrappers' code)."""
    return (aten.lookup(entry.op) is None and entry.schema_text is not None
            and entry.register is not None and not entry.register.value)


def aten_op(entry: CatalogEntry) -> aten.AtenOp | None:
    """The op's schema: from torch, or from the entry for a helper."""
    found = aten.lookup(entry.op)
    if found is None and is_helper(entry):
        return aten.AtenOp(entry.op, entry.schema_text.value.strip().removeprefix("aten::"), ("function",))
    return found


def check_entry(doc: Document, entry: CatalogEntry, diags: Diagnostics, where: tuple | None = None) -> None:
    where = where or ("ops", entry.op)
    op = aten.lookup(entry.op)
    if op is None and is_helper(entry):
        try:
            op = aten_op(entry)
            parsed = op.func
        except Exception as exc:  # torchgen raises AssertionError/RuntimeError on bad schemas
            diags.add(entry.schema_text.loc, key_path(where + ("schema",)),
                      f"not a valid ATen schema: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
            return
        if str(parsed.name) != entry.op:
            diags.add(entry.schema_text.loc, key_path(where + ("schema",)),
                      f"the schema names '{parsed.name}', not '{entry.op}'")
            return
    if op is None:
        diags.add(entry.loc, key_path(where),
                  f"'{entry.op}' is not an op of the installed torch"
                  f"{did_you_mean(entry.op, aten.op_index())}"
                  " (a DIPU-private helper needs schema: and register: false)")
        return
    if entry.returns and len(entry.returns) != len(op.func.returns):
        diags.add(doc.loc(where + ("returns",)), key_path(where + ("returns",)),
                  f"{entry.op} has {len(op.func.returns)} return(s), not {len(entry.returns)}")
        return
    sig = signature_of(op, entry.returns)
    if entry.schema_text is not None and _normalise(entry.schema_text.value) != _normalise(op.schema):
        diags.add(entry.schema_text.loc, key_path(where + ("schema",)),
                  f"schema differs from the installed torch's: {op.schema}")
    params = {p.name: p for p in sig.params}
    fresh = [r.name for r in sig.fresh_returns]
    handles = [n for n, _ in entry.ins] + list(entry.outs)
    declared = set(entry.locals) | set(handles) | set(entry.sizes)
    declared |= {n + "DiopiTensorHandle" for n in handles} | {n + "DiopiSize" for n in entry.sizes}
    for key, names in (("locals", entry.locals), ("ins", [n for n, _ in entry.ins]), ("outs", entry.outs),
                       ("sizes", entry.sizes)):
        for name in names:
            if name in params:
                diags.add(doc.loc(where + (key,)), key_path(where + (key,)),
                          f"'{name}' is an argument of {entry.op}, not a local of the custom code")
    for name in sorted(set(entry.locals) & (set(handles) | set(entry.sizes))):
        diags.add(doc.loc(where + ("locals",)), key_path(where + ("locals",)),
                  f"'{name}' is listed under ins/outs/sizes, which already declares it as a local")
    if declared and not entry.code:
        diags.add(entry.loc, key_path(where + ("code",)),
                  "locals/ins/outs/sizes name variables of the custom code, but the entry has no code:")
    known = set(params) | set(fresh) | {"ctx"} | declared | set(derived_names(sig))
    call = entry.call
    if not call.function.startswith("diopi"):
        diags.add(call.loc, key_path(where + ("call",)), f"'{call.function}' is not a DIOPI function (diopi...)")
    if not call.args or call.args[0].text != "ctx":
        diags.add(call.loc, key_path(where + ("call",)), "the first argument of a DIOPI call must be 'ctx'")
    dummy = entry.dummy_call is not None and entry.dummy_call.value
    if dummy:
        # A dummy call is never compiled: its function must exist (registration uses it), its arity is moot.
        scratch = Diagnostics()
        diopi_api.check_call(call, where + ("call",), scratch)
        diags.extend(d for d in scratch.items if "the call passes" not in d.message)
    else:
        diopi_api.check_call(call, where + ("call",), diags)
    for arg in call.args:
        names = referenced_names(arg.text)
        for name in names:
            # With dummy_call the call is never compiled: only its function name is used.
            if name not in known and not dummy:
                diags.add(call.loc, key_path(where + ("call",)),
                          f"'{name}' is not an argument of {entry.op}{did_you_mean(name, known)}"
                          f" (arguments: {', '.join(sorted(known - {'ctx'}))})")
    for name, _expr in entry.alloc:
        if name not in fresh:
            what = f"fresh returns are: {', '.join(fresh)}" if fresh else "the op returns no fresh tensor"
            diags.add(doc.loc(where + ("alloc", name), key=True), key_path(where + ("alloc", name)),
                      f"'{name}' is not a fresh return of {entry.op} ({what})")
    for ret in sig.fresh_returns:
        if ret.name in entry.locals and entry.alloc_for(ret.name) is not None:
            diags.add(doc.loc(where + ("alloc", ret.name), key=True), key_path(where + ("alloc", ret.name)),
                      f"'{ret.name}' is allocated here and also listed under locals (declared by the code)")
        elif ret.name not in entry.locals and entry.alloc_for(ret.name) is None:
            what = "a new tensor" if ret.is_tensor else "a new value"
            diags.add(entry.loc, key_path(where + ("alloc",)),
                      f"{entry.op} returns {what} '{ret.name}': say how to allocate it under alloc:"
                      f" or declare it in code.beginning and list it under locals:")
    checkable = {p.name for p in sig.params if p.conv in (Conv.TENSOR, Conv.OPT_TENSOR, Conv.MUT_TENSOR)}
    checkable |= set(handles) | {r.name for r in sig.fresh_returns if r.is_tensor}
    for name in entry.no_device_check:
        if name not in checkable:
            diags.add(doc.loc(where + ("no_device_check",)), key_path(where + ("no_device_check",)),
                      f"'{name}' is not a device-checked tensor of {entry.op}"
                      f"{did_you_mean(name, checkable)}")
    _check_switches(doc, entry, sig, diags, where)
    guard = entry.device_guard.value if entry.device_guard else None
    if isinstance(guard, str):
        param = params.get(guard)
        if param is None or param.conv not in (Conv.TENSOR, Conv.MUT_TENSOR, Conv.OPT_TENSOR):
            diags.add(entry.device_guard.loc, key_path(where + ("device_guard",)),
                      f"'{guard}' is not a tensor argument of {entry.op}")


def _check_switches(doc: Document, entry: CatalogEntry, sig, diags: Diagnostics, where: tuple) -> None:
    """Settings that contradict each other; both places are named."""
    if entry.dummy_call is not None and entry.dummy_call.value and "beginning" not in dict(entry.code) \
            and "before_call" not in dict(entry.code):
        diags.add(entry.dummy_call.loc, key_path(where + ("dummy_call",)),
                  "dummy_call skips DIOPI, so code.beginning or code.before_call must do the work")
    if entry.dummy_call is not None and entry.dummy_call.value and entry.fallback_to_cpu is not None \
            and entry.fallback_to_cpu.value:
        diags.add(entry.fallback_to_cpu.loc, key_path(where + ("fallback_to_cpu",)),
                  f"the CPU-fallback block can never run: dummy_call is set at {entry.dummy_call.loc}")
    if entry.force_fallback is not None and entry.force_fallback.value and not (
            entry.custom_fallback is not None and entry.custom_fallback.value):
        diags.add(entry.force_fallback.loc, key_path(where + ("force_fallback",)),
                  "force_fallback needs custom_fallback: true (it forces the custom fallback)")
    if entry.register is not None and not entry.register.value:
        for key in ("custom_fallback", "autocompare"):
            other = getattr(entry, key)
            if other is not None and other.value:
                diags.add(other.loc, key_path(where + (key,)),
                          f"{key} has no effect: the op is not registered (register: false at {entry.register.loc})")
        if entry.autograd is not None:
            diags.add(entry.autograd.loc, key_path(where + ("autograd",)),
                      f"an autograd op must be registered (register: false at {entry.register.loc})")
    if entry.autograd is not None and sig.kind != SchemaKind.functional:
        diags.add(entry.autograd.loc, key_path(where + ("autograd",)),
                  f"autograd wraps functional ops only; {entry.op} is {sig.kind.name}")


def check_autograd(catalog_entries: dict[str, CatalogEntry], entry: CatalogEntry, diags: Diagnostics,
                   where: tuple | None = None) -> None:
    """autograd.backward/forward name ops of the catalog (their wrappers are called)."""
    ag = entry.autograd
    if ag is None:
        return
    for key, ref in (("backward", ag.backward), ("forward", ag.forward)):
        if ref is None:
            continue
        if ref.value not in catalog_entries:
            diags.add(ref.loc, key_path((where or ("ops", entry.op)) + ("autograd", key)),
                      f"'{ref.value}' is not in the op catalog (its wrapper is called)"
                      f"{did_you_mean(ref.value, catalog_entries)}")


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
    for entry in entries:
        check_autograd(first_seen, entry, diags)
    return Catalog(tuple(entries), tuple(d.path for d in docs))
