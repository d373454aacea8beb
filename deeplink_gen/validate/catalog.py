"""Checks of catalog entries (and of vendors' replacement entries) that a
schema cannot express: the op exists in torch, the call names a DIOPI
function with the right arity and only known names, every fresh return is
allocated, settings do not contradict each other."""

from __future__ import annotations

from torchgen.model import SchemaKind

from deeplink_gen import cpplex
from deeplink_gen.cpptext import as_filled, referenced_names
from deeplink_gen.errors import Diagnostics, Suggestion, display_path
from deeplink_gen.interfaces import aten
from deeplink_gen.model import Catalog, CatalogEntry, DiopiCall, Prototypes, TorchVersion
from deeplink_gen.translate.args import HANDLE, TENSOR_HANDLES, ArgKind
from deeplink_gen.translate.signature import OpSignature, derived_names, entry_signature
from deeplink_gen.validate.locals import (
    generated_names, inner_locals, is_empty, top_level_declarations, wrapper_locals,
)
from deeplink_gen.validate.names import C_KEYWORDS, macro_name_problem
from deeplink_gen.validate.reference import Reference
from deeplink_gen.validate.schemas import difference

def check_call(call: DiopiCall, where: tuple, protos: Prototypes, diags: Diagnostics, *, arity: bool = True) -> None:
    """A call names an existing DIOPI operator and passes as many arguments as it takes."""
    if not call.function.startswith("diopi"):
        diags.add(call.loc, where, f"'{call.function}' is not a DIOPI function (diopi...)")
        return
    p = protos.get(call.function)
    if p is None:
        diags.add(call.loc, where, f"'{call.function}' is not a DIOPI operator in the DIOPI prototypes "
                                   f"({display_path(protos.source)})", Suggestion(call.function, protos.functions))
    elif arity and len(call.args) != len(p.params):
        diags.add(call.loc, where, f"{call.function} takes {len(p.params)} arguments ({p.params_text}); "
                                   f"the call passes {len(call.args)} (declared at {p.loc})")


def _signature(entry: CatalogEntry, ctx: Reference, diags: Diagnostics) -> OpSignature | None:
    """The entry's op and signature, or None after reporting why there is none."""
    where = entry.where
    op = ctx.ops.op_of(entry)
    if op is None:
        diags.add(entry.loc, where, f"'{entry.op}' is not an op of {ctx.ops.what}",
                  Suggestion(entry.op, ctx.ops.ops, " (a DIPU-private helper needs schema: and register: false)"))
        return None
    if not op.helper:
        try:
            aten.function_schema(op)
        except aten.SCHEMA_ERRORS as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            diags.add(entry.loc, where, f"the installed torchgen cannot read {ctx.ops.source}'s schema of "
                                        f"{entry.op} ({op.schema}): {first}")
            return None
    if entry.schema_text is not None:
        try:
            written = aten.parse_schema(entry.schema_text.value)
        except aten.SCHEMA_ERRORS as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            diags.add(entry.schema_text.loc, where + ("schema",), f"not a valid ATen schema: {first}")
            return None
        if str(written.name) != entry.op:
            diags.add(entry.schema_text.loc, where + ("schema",), f"the schema names '{written.name}', not '{entry.op}'")
            return None
        why = None if op.helper else difference(written, aten.function_schema(op))
        if why is not None:
            diags.add(entry.schema_text.loc, where + ("schema",),
                      f"schema differs from the installed torch's: {why} (torch: {op.schema})")
            return None
    returns = aten.function_schema(op).returns
    if entry.returns and len(entry.returns) != len(returns):
        diags.add(entry.key_loc("returns"), where + ("returns",),
                  f"{entry.op} has {len(returns)} return(s), not {len(entry.returns)}")
        return None
    return entry_signature(entry, op)


def check_pasted(entry: CatalogEntry, diags: Diagnostics) -> None:
    """Each piece of C++ the entry pastes as it is can stand there: its statements (code, autograd)
    and its expressions (alloc, the call's arguments) close what they open, and an expression
    is not empty."""
    texts = [(("code", key), text, False) for key, text in entry.code]
    texts += [(("autograd", key), text, False) for key, text in (entry.autograd.texts() if entry.autograd else ())]
    texts += [(("alloc", a.name.value), a.expr, True) for a in entry.alloc]
    for key, text, expression in texts:
        # As pasted: the memory-format placeholder filled (its default text could hide a comment's end).
        why = next(filter(None, (cpplex.problem(t, expression=expression) for t in as_filled(text.value))), None)
        if why is not None:
            diags.add(text.loc, entry.where + key, f"this C++ cannot be pasted as it is: {why} "
                                                   "(counted from its first line)")
        elif expression and is_empty(text.value):
            diags.add(text.loc, entry.where + key, f"the expression is empty (only blanks or comments): write "
                                                   f"the C++ expression that allocates '{key[-1]}'")
    for i, arg in enumerate(entry.call.args, 1):
        why = cpplex.problem(arg.text, expression=True)
        if why is not None:
            diags.add(entry.call.loc, entry.where + ("call",), f"argument '{arg.text}' cannot be pasted as it is: {why}")
        elif is_empty(arg.text):
            diags.add(entry.call.loc, entry.where + ("call",), f"argument {i} ('{arg.text}') is empty (only "
                                                               "blanks or comments): write the value it passes")


def check_entry(entry: CatalogEntry, ctx: Reference, diags: Diagnostics) -> None:
    check_pasted(entry, diags)
    sig = _signature(entry, ctx, diags)
    if sig is None:
        return
    where = entry.where
    params = {p.name: p for p in sig.params}
    fresh = [r.name for r in sig.fresh_returns]
    handles = [n for n, _ in entry.ins] + list(entry.outs)
    declared = set(entry.locals) | set(handles) | set(entry.sizes)
    declared |= {n + HANDLE for n in handles} | {n + ArgKind.SIZES.local for n in entry.sizes}
    own = wrapper_locals(sig, entry)
    _check_argument_names(entry, sig, own, diags)
    _check_saved(entry, diags)
    _check_declared_names(entry, sig, diags)
    for key, names in (("locals", entry.locals), ("ins", [n for n, _ in entry.ins]), ("outs", entry.outs),
                       ("sizes", entry.sizes)):
        for name in names:
            if name in params:
                diags.add(entry.key_loc(key), where + (key,),
                          f"'{name}' is an argument of {entry.op}, not a local of the custom code")
            elif name in own:
                diags.add(entry.key_loc(key), where + (key,), f"'{name}' is declared by the generated wrapper "
                                                              f"({own[name]}): name the custom code's local otherwise")
            elif name in C_KEYWORDS:
                diags.add(entry.key_loc(key), where + (key,), f"'{name}' is a C++ keyword, not a name of a local")
    listed: dict[str, str] = {}
    for key, written in ([("ins", n + "?" * optional) for n, optional in entry.ins] + [("outs", n) for n in entry.outs]
                         + [("sizes", n) for n in entry.sizes]):
        name = written.rstrip("?")
        if name in listed:
            diags.add(entry.key_loc(key), where + (key,), f"'{name}' is listed twice ({listed[name]} and {key}: "
                                                          f"{written}): list each local once")
        listed.setdefault(name, f"{key}: {written}")
    for name in sorted(set(entry.locals) & (set(handles) | set(entry.sizes))):
        diags.add(entry.key_loc("locals"), where + ("locals",),
                  f"'{name}' is listed under ins/outs/sizes, which already declares it as a local")
    if declared and not entry.code:
        diags.add(entry.loc, where + ("code",),
                  "locals/ins/outs/sizes name variables of the custom code, but the entry has no code:")
    known = set(params) | set(fresh) | {"ctx"} | declared | set(derived_names(sig))
    call = entry.call
    if not call.args or call.args[0].text != "ctx":
        diags.add(call.loc, where + ("call",), "the first argument of a DIOPI call must be 'ctx'")
    # A dummy call is never compiled: only its function name is used (for registration).
    dummy = entry.flag("dummy_call")
    check_call(call, where + ("call",), ctx.protos, diags, arity=not dummy)
    if not dummy:
        for arg in call.args:
            for name in referenced_names(arg.text):
                if name not in known:
                    diags.add(call.loc, where + ("call",), f"'{name}' is not an argument of {entry.op}",
                              Suggestion(name, known, f" (arguments: {', '.join(sorted(known - {'ctx'}))})"))
    for alloc in entry.alloc:
        if alloc.name.value not in fresh:
            what = f"fresh returns are: {', '.join(fresh)}" if fresh else "the op returns no fresh tensor"
            diags.add(alloc.name.loc, where + ("alloc", alloc.name.value),
                      f"'{alloc.name.value}' is not a fresh return of {entry.op} ({what})")
    for ret in sig.fresh_returns:
        alloc = entry.alloc_for(ret.name)
        if ret.name in entry.locals and alloc is not None:
            diags.add(alloc.name.loc, where + ("alloc", ret.name),
                      f"'{ret.name}' is allocated here and also listed under locals (declared by the code)")
        elif ret.name not in entry.locals and alloc is None:
            what = "a new tensor" if ret.is_tensor else "a new value"
            diags.add(entry.loc, where + ("alloc",),
                      f"{entry.op} returns {what} '{ret.name}': say how to allocate it under alloc:"
                      f" or declare it in code.beginning and list it under locals:")
    checkable = {p.name for p in sig.params if p.kind in TENSOR_HANDLES}
    checkable |= set(handles) | {r.name for r in sig.fresh_returns if r.is_tensor}
    for name in entry.no_device_check:
        if name not in checkable:
            diags.add(entry.key_loc("no_device_check"), where + ("no_device_check",),
                      f"'{name}' is not a device-checked tensor of {entry.op}", Suggestion(name, checkable))
    _check_switches(entry, sig, diags)
    guard = entry.device_guard.value if entry.device_guard else None
    if isinstance(guard, str):
        param = params.get(guard)
        if param is None or param.kind not in TENSOR_HANDLES:
            diags.add(entry.device_guard.loc, where + ("device_guard",), f"'{guard}' is not a tensor argument of {entry.op}")


def _check_argument_names(entry: CatalogEntry, sig: OpSignature, own: dict[str, str], diags: Diagnostics) -> None:
    """The wrapper's parameters and the fresh returns it allocates share its scope with its own
    locals (and those of its CPU fallback, autocompare twin and autograd function), each is
    declared once, and each must be a name C++ takes."""
    if entry.schema_text is not None:
        at = (entry.schema_text.loc, entry.where + ("schema",), "rename it in the schema")
    else:
        at = (entry.loc, entry.where, "write a schema: that names it otherwise")
    named = [("argument", p.name, at) for p in sig.params]
    returns_at = (entry.key_loc("returns"), entry.where + ("returns",), "rename it under returns:")
    named += [("return", r.name, returns_at if entry.returns else at) for r in sig.fresh_returns]
    inner = inner_locals(sig, entry)
    first: dict[str, str] = {}
    for what, name, (loc, key, fix) in named:
        if name in first:
            why = f"is also the name of {'another ' + what if first[name] == what else 'an ' + first[name]}"
        elif name in C_KEYWORDS:
            why = "is a C++ keyword"
        elif name in own:
            why = f"is also declared by the generated wrapper ({own[name]})"
        elif name in inner:
            why = f"is also declared or called by the generated code ({inner[name]})"
        elif (problem := macro_name_problem(name)) is not None:
            why = problem
        else:
            first[name] = what
            continue
        first.setdefault(name, what)
        diags.add(loc, key, f"{what} '{name}' of {entry.op} {why}: {fix} (names may differ from torch's)")


def _check_declared_names(entry: CatalogEntry, sig: OpSignature, diags: Diagnostics) -> None:
    """The custom code declares no name that the generated code around it declares in the same
    scope, which would not compile. A name listed under locals/ins/outs/sizes is checked there."""
    listed = set(entry.locals) | {n for n, _ in entry.ins} | set(entry.outs) | set(entry.sizes)
    texts = [(("code", key), text) for key, text in entry.code]
    texts += [(("autograd", key), text) for key, text in (entry.autograd.texts() if entry.autograd else ())]
    for key, text in texts:
        generated = generated_names(sig, entry, key)
        filled = as_filled(text.value)[0]
        for token in top_level_declarations(filled):
            what = generated.get(token.text)
            if what is not None and token.text not in listed:
                line, column = cpplex.line_and_column(filled, token.offset)
                diags.add(text.loc, entry.where + key, (
                    f"the code declares '{token.text}' at line {line} column {column}, which the generated code "
                    f"declares in the same scope ({what}), so it would not compile: rename the code's "
                    f"'{token.text}' (counted from its first line)"))


def _check_saved(entry: CatalogEntry, diags: Diagnostics) -> None:
    """autograd.saved names values the forward stores (ctx->saved_data["n"] = n) and the backward
    declares as n_: each a name C++ takes."""
    if entry.autograd is None:
        return
    for name in entry.autograd.saved:
        why = "is a C++ keyword" if name in C_KEYWORDS else macro_name_problem(name)
        if why is not None:
            diags.add(entry.autograd.loc, entry.where + ("autograd", "saved"),
                      f"saved value '{name}' {why}: save a value of another name (the forward stores "
                      f"'{name}' itself)")


def _check_switches(entry: CatalogEntry, sig: OpSignature, diags: Diagnostics) -> None:
    """Settings that contradict each other; both places are named."""
    where = entry.where
    if entry.flag("dummy_call") and not any(h in dict(entry.code) for h in ("beginning", "before_call")):
        diags.add(entry.dummy_call.loc, where + ("dummy_call",),
                  "dummy_call skips DIOPI, so code.beginning or code.before_call must do the work")
    if entry.flag("dummy_call") and entry.fallback_to_cpu is not None and entry.fallback_to_cpu.value:
        diags.add(entry.fallback_to_cpu.loc, where + ("fallback_to_cpu",),
                  f"the CPU-fallback block can never run: dummy_call is set at {entry.dummy_call.loc}")
    if entry.flag("force_fallback") and not entry.flag("custom_fallback"):
        diags.add(entry.force_fallback.loc, where + ("force_fallback",),
                  "force_fallback needs custom_fallback: true (it forces the custom fallback)")
    if not entry.is_registered_here:
        for key in ("custom_fallback", "autocompare"):
            other = getattr(entry, key)
            if other is not None and other.value:
                diags.add(other.loc, where + (key,),
                          f"{key} has no effect: the op is not registered (register: false at {entry.register.loc})")
        if entry.autograd is not None:
            diags.add(entry.autograd.loc, where + ("autograd",),
                      f"an autograd op must be registered (register: false at {entry.register.loc})")
    if entry.autograd is not None and sig.kind != SchemaKind.functional:
        diags.add(entry.autograd.loc, where + ("autograd",),
                  f"autograd wraps functional ops only; {entry.op} is {sig.kind.name}")


def check_autograd(entry: CatalogEntry, catalog: Catalog, ctx: Reference, diags: Diagnostics) -> None:
    """autograd.backward/forward name ops of the catalog that apply to the
    chosen torch (their wrappers are called)."""
    if entry.autograd is None:
        return
    for key, ref in entry.autograd.ops():
        found = catalog.all(ref.value)
        if not found:
            diags.add(ref.loc, entry.where + ("autograd", key),
                      f"'{ref.value}' is not in the op catalog (its wrapper is called)",
                      Suggestion(ref.value, catalog.names()))
        elif catalog.get(ref.value, ctx.torch_version) is None:
            gate = found[0].torch
            diags.add(ref.loc, entry.where + ("autograd", key),
                      f"'{ref.value}' does not apply to torch {ctx.torch_version} (torch: '{gate.text}' at "
                      f"{gate.loc}), but {entry.op} calls its wrapper")


def _bounds(entry: CatalogEntry) -> set[TorchVersion]:
    """Versions at and just past each bound of the entry's gate."""
    out = set()
    for _op, v in entry.torch.clauses if entry.torch is not None else ():
        out |= {v, TorchVersion(v.major, v.minor, v.patch + 1), TorchVersion(v.major, v.minor + 1, 0)}
        if v.patch:
            out.add(TorchVersion(v.major, v.minor, v.patch - 1))
        elif v.minor:
            out.add(TorchVersion(v.major, v.minor - 1, 99))
    return out


def check_duplicates(catalog: Catalog, ctx: Reference, diags: Diagnostics) -> None:
    """An op may be defined more than once only with torch: gates that admit no common version."""
    seen: dict[str, list[CatalogEntry]] = {}
    for entry in catalog.entries:
        for earlier in seen.get(entry.op, ()):
            versions = sorted({ctx.torch_version} | _bounds(entry) | _bounds(earlier))
            common = next((v for v in versions if (entry.torch is None or entry.torch.admits(v))
                           and (earlier.torch is None or earlier.torch.admits(v))), None)
            if common is not None:
                why = "" if entry.torch is None and earlier.torch is None else f" for torch {common}"
                diags.add(entry.loc, entry.where, f"'{entry.op}' is already defined at {earlier.loc}{why}")
                break
        seen.setdefault(entry.op, []).append(entry)
