"""One upstream entry -> a catalog entry (a plain dict, as it will be
written), or skipped; with a warning for every problem found on the way."""

from __future__ import annotations

import functools

import re
from dataclasses import dataclass, field
from pathlib import Path

from torchgen.model import FunctionSchema

from deeplink_gen.commands.import_dipu.dialect import OLDER_KEYS, Dialect
from deeplink_gen.commands.import_dipu.placeholders import check_placeholders
from deeplink_gen.commands.import_dipu.read import Upstream, warning
from deeplink_gen.commands.import_dipu.readings import on_unless_false, torch_gate, torch_kept, true_like
from deeplink_gen.cpptext import IDENT, parse_call, referenced_names
from deeplink_gen.errors import DeeplinkGenError, Diagnostic, ParseError
from deeplink_gen.interfaces import aten
from deeplink_gen.model import AtenOp, OpTable
from deeplink_gen.translate.args import HANDLE, LOCAL_SUFFIX, ArgKind
from deeplink_gen.translate.signature import OpSignature, return_names, signature_of
from deeplink_gen.validate.schemas import difference

KNOWN_KEYS = {
    "schema", "interface", "custom_code_at_the_beginning", "custom_code", "custom_code_before_call_diopi",
    "custom_code_before_return", "device", "torch_ver", "dummy_call_diopi", "custom_fallback",
    "force_fallback", "enable_autocompare", "enable_fallback_to_cpu", "register_operator",
    "no_device_check_args", "ins", "outs", "size_attr", "autograd", "forward_schema",
    "forward_process_code", "backward_schema", "saved_data", "cal_grad_code", "backward_return_code",
    "wrappter_custom_return", "generate_device_guard", "device_guard_arg", "print_func_call_info",
    "print_op_args", "use_diopi_adapter", "enable_dipu_extra_feature", "current_device",
    "current_torch_ver", *OLDER_KEYS,
}
CODE_KEYS = (("custom_code_at_the_beginning", "beginning"), ("custom_code", "beginning"),
             ("custom_code_before_call_diopi", "before_call"), ("custom_code_before_return", "before_return"))
# The keys whose value is a list of argument or local names.
NAME_LISTS = ("ins", "outs", "size_attr", "no_device_check_args", "saved_data")
AUTOGRAD_KEYS = ("forward_schema", "forward_process_code", "backward_schema", "saved_data",
                 "cal_grad_code", "backward_return_code", "wrappter_custom_return")


@dataclass
class Imported:
    """One upstream entry translated, before the per-vendor choice."""

    up: Upstream
    op: str
    entry: dict
    devices: list | None
    interface_fn: str | None
    has_placeholders: bool
    notes: list = field(default_factory=list)


class Skip(DeeplinkGenError):
    """The entry cannot be imported; the message says why."""

    def __init__(self, message: str, key: str | None = None):
        super().__init__(message)
        self.key = key


@dataclass
class _Work:
    """The entry being translated, and what each step has found so far."""

    up: Upstream
    path: str
    table: OpTable                      # the ops of the torch imported for
    dialect: Dialect                    # the DIPU generator the file is read as written for
    notes: list[Diagnostic] = field(default_factory=list)
    entry: dict = field(default_factory=dict)

    @property
    def d(self) -> dict:
        return self.up.data

    def note(self, message: str, key: str | None = None) -> None:
        line = self.up.key_lines.get(key, [self.up.line])[0] if key else self.up.line
        self.notes.append(warning(self.path, line, message))


def schema_name(text: str) -> str:
    return text.strip().removeprefix("aten::").split("(", 1)[0].strip()


@functools.lru_cache(maxsize=4096)
def parse_schema(text: str) -> tuple[FunctionSchema | None, str | None]:
    """Parse an upstream schema; fix the known non-ATen spellings. (schema, the fixed text if fixed).
    An op file can repeat one schema thousands of times: each is parsed once (schemas are frozen)."""
    body = text.strip().removeprefix("aten::")
    try:
        return FunctionSchema.parse(body), None
    except aten.SCHEMA_ERRORS:
        pass
    fixed = re.sub(r"->\s*\(\)", "-> ()", body)
    fixed = re.sub(r"->\s*void\s*$", "-> ()", fixed)
    fixed = re.sub(r"const\s+at::ITensorListRef\s*&", "Tensor[]", fixed)
    fixed = re.sub(r"\bat::TensorList\b", "Tensor[]", fixed)
    fixed = re.sub(r"\*\s+(?=[A-Za-z])", "*, ", fixed) if ", * " in fixed else fixed
    if fixed != body:
        try:
            return FunctionSchema.parse(fixed), fixed
        except aten.SCHEMA_ERRORS:
            pass
    return None, None


def _rewrite_expr(expr: str, inputs: set, outputs: set, sizes: set, gens: set, scalars: set) -> str:
    """Upstream rewrote names inside the interface text by kind; an
    expression keeps that meaning by naming the converted local explicitly."""
    stripped = expr.strip()
    m = re.fullmatch(r"&\s*([A-Za-z_]\w*)", stripped)
    if m and m.group(1) in scalars:
        return f"&{m.group(1)}{ArgKind.SCALAR.local}"
    out, pos = [], 0
    for m in IDENT.finditer(expr):
        name = m.group()
        before = expr[: m.start()].rstrip()
        after = expr[m.end():]
        if before.endswith((".", "->", "::")):
            continue
        follows = re.match(r"\s*([,)]|$)", after)
        suffix = None
        if name in inputs and (follows or after.startswith(" ")):
            suffix = HANDLE
        elif name in outputs and (before.endswith(("(", ",", "&")) or expr[: m.start()].endswith(" ")):
            suffix = HANDLE
        elif name in sizes and follows:
            suffix = ArgKind.SIZES.local
        elif name in gens and follows:
            suffix = ArgKind.GENERATOR.local
        if suffix:
            out.append(expr[pos:m.end()] + suffix)
            pos = m.end()
    out.append(expr[pos:])
    return "".join(out)


def derived_function(op: str) -> str:
    """The DIOPI function DIPU's generator names for an entry without
    interface (and registers, which decides at run time whether the op is
    used): "_." -> "Inp", "." dropped, then "out", "_mode", "Tensor", "_"
    and "native_" removed from the name, in that order, and "diopi" +
    the name capitalised (sub_.Tensor -> diopiSubInp)."""
    name = op.replace("_.", "Inp").replace(".", "")
    for pattern in ("out", "_mode", "Tensor", "_", "[nN]ative_"):
        name = re.sub(pattern, "", name)
    return "diopi" + name[:1].upper() + name[1:]


def _derive_interface(op: str, sig: OpSignature) -> str:
    """The call for an entry without interface, as DIPU's generator derives
    it: its function name; ctx, the fresh outputs, the written (Tensor(a!))
    arguments, then the others."""
    outs = [r.name for r in sig.returns if r.alias is None and r.is_tensor]
    written = [p.name for p in sig.params if p.mutable and p.kind == ArgKind.MUT_TENSOR]
    rest = [p.name for p in sig.params if p.name not in written]
    return f"{derived_function(op)}({', '.join(['ctx'] + outs + written + rest)})"


# ---------------------------------------------------------------- the steps

def _check_keys(w: _Work) -> None:
    for key, lines in w.up.key_lines.items():
        if len(lines) > 1:
            w.notes.append(warning(w.path, lines[1], f"duplicate key '{key}' (upstream keeps the last value; so do we)"))
    for key in w.d:
        if key in OLDER_KEYS and not w.dialect.older:
            w.note(f"'{key}' is ignored by DIPU's generator (it reads {OLDER_KEYS[key]}); the file is read as"
                   f" written for {w.dialect.describe()}; ignored", key)
        elif key not in KNOWN_KEYS:
            w.note(f"unknown key '{key}' (DIPU's generator ignores it silently); ignored", key)


def _filters(w: _Work, torch_code: str) -> tuple[str, list | None, list | None]:
    """(op name, device filter, torch_ver filter); skips what DIPU would not generate."""
    d = w.d
    if not isinstance(d.get("schema"), str):
        raise Skip("no schema string (DIPU's generator crashes with KeyError)")
    devices = d.get("device")
    if devices is not None and not (isinstance(devices, list) and all(isinstance(v, str) for v in devices)):
        raise Skip("device: must be a list of vendor names (DIPU's generator crashes on a plain string)", "device")
    for key in NAME_LISTS:
        names = d.get(key)
        if names is not None and not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
            raise Skip(f"{key}: must be a list of names", key)
    vers = d.get("torch_ver")
    if vers is not None:
        if not isinstance(vers, list) or not all(isinstance(v, str) for v in vers):
            raise Skip("torch_ver: must be a list of strings (DIPU's generator crashes on ints)", "torch_ver")
        if not torch_kept(vers, torch_code):
            odd = [v for v in vers if v != "all" and not (len(v.lstrip("-")) == 5 and v.lstrip("-").isdigit())]
            hint = f" (DIPU compares 5-digit codes such as {torch_code}: {odd} never match)" if odd else ""
            raise Skip(f"torch_ver {vers} does not select torch {torch_code}{hint}", "torch_ver")
    return schema_name(d["schema"]), devices, vers


def _schema(w: _Work, op: str) -> tuple[FunctionSchema, AtenOp, bool]:
    """(the upstream schema, the op, whether it is registered); entry["schema"]
    when the wrapper must take the upstream schema's names or integer types."""
    d = w.d
    parsed, fixed = parse_schema(d["schema"])
    known = w.table.get(op)
    if parsed is None and known is not None:
        # The op exists: torch's schema is meant when the argument names agree.
        written = re.findall(r"(\w+)\s*(?:=[^,)]*)?\s*(?=[,)])", d["schema"].split("->")[0].split("(", 1)[-1])
        if written == [a.name for a in aten.function_schema(known).arguments.flat_all]:
            parsed, fixed = aten.function_schema(known), known.schema
    if parsed is None:
        raise Skip(f"schema does not parse as an ATen schema: {d['schema']!r}", "schema")
    if fixed is not None:
        w.note(f"schema is not a valid ATen schema; read as {fixed!r} (fixed)", "schema")
    register = w.dialect.registered(d)
    found = known
    if found is None and register and not w.dialect.older and "register_op" in d and not d["register_op"]:
        # Older files spell it register_op (ignored by DIPU's generator since it was renamed); an op
        # torch does not have cannot be registered anyway, so the intent is unambiguous.
        w.note(f"'{op}' is not an op of torch and says register_op: False (the old spelling);"
               " read as register_operator: False (fixed)", "register_op")
        register = False
    if found is None and register:
        raise Skip(f"'{op}' is not an op of {w.table.what}", "schema")
    if not register:
        # An unregistered entry is a helper: nothing of torch's calls it, so its schema is its own
        # (topsrider's max_pool2d_backward takes input and indices, torch's takes self), as in DIPU.
        if found is None:
            w.note(f"'{op}' is not an op of torch; imported as an unregistered helper with its schema", "schema")
        w.entry["schema"] = str(parsed)
        return parsed, AtenOp(op, str(parsed), ("function",), helper=True), register
    if known is not None and str(parsed.arguments) != str(aten.function_schema(known).arguments):
        why = difference(parsed, aten.function_schema(known))
        if why is None:
            # Argument names, int/SymInt or return names differ: the wrapper takes the upstream ones,
            # which the custom code and the call are written for.
            w.entry["schema"] = str(parsed)
        else:
            w.note(f"schema differs from torch's ({why}); torch's {known.schema} is used", "schema")
    return parsed, found, register


def _call(w: _Work, op: str, sig: OpSignature, up_returns: tuple[str, ...]) -> tuple[str, list[str]]:
    """The DIOPI call: (its function, its arguments as written for deeplink-gen)."""
    d = w.d
    interface = d.get("interface")
    if isinstance(interface, str):
        text = interface.strip().rstrip(";").strip()
    else:
        text = _derive_interface(op, sig)
        w.note(f"no interface: call derived from the schema as {text}", "schema")
    try:
        fn, args = parse_call(text)
    except ParseError as exc:
        raise Skip(f"interface is not a call ({exc})", "interface") from None
    texts = [a.text for a in args]
    size_attr = list(d.get("size_attr") or [])
    params = {p.name: p for p in sig.params}
    ins_names = {str(n).rstrip("?") for n in d.get("ins") or []}
    outs = {str(n) for n in d.get("outs") or []}
    inputs = {n for n, p in params.items() if p.kind in (ArgKind.TENSOR, ArgKind.OPT_TENSOR)} | ins_names
    outputs = {n for n, p in params.items() if p.kind == ArgKind.MUT_TENSOR} | outs
    outputs |= {n for n, r in zip(up_returns, sig.returns) if r.alias is None and r.is_tensor}
    sizes = set(size_attr) | {n for n, p in params.items() if p.kind == ArgKind.SYMINT_LIST}
    gens = {n for n, p in params.items() if p.kind == ArgKind.GENERATOR}
    scalars = {n for n, p in params.items() if p.kind == ArgKind.SCALAR}
    call_args = []
    for i, t in enumerate(texts):
        if i == 0 and t.replace(" ", "") == "&context":
            w.note("the DIOPI context is written '&context'; passed as ctx (fixed)", "interface")
            t = "ctx"
        elif not t.isidentifier():
            t = _rewrite_expr(t, inputs, outputs, sizes, gens, scalars)
        elif t in params and params[t].kind in (ArgKind.INT_LIST, ArgKind.OPT_INT_LIST) and t not in size_attr:
            w.note(f"'{t}' is an int[] passed without size_attr (raw at::IntArrayRef upstream);"
                   " converted to diopiSize_t (fixed)", "interface")
        call_args.append(t)
    w.entry["call"] = f"{fn}({', '.join(call_args)})"
    return (fn if isinstance(interface, str) else None), call_args


def _flags(w: _Work, vers: list | None, register: bool, torch_code: str) -> bool:
    """torch gate, register, dummy call, fallbacks, device guard; returns whether it is a dummy call."""
    d, entry = w.d, w.entry
    if vers is not None:
        gate = torch_gate(vers, torch_code)
        if gate:
            entry["torch"] = gate
    if not register:
        entry["register"] = False
    dummy = true_like(d.get("dummy_call_diopi", False))
    if dummy:
        entry["dummy_call"] = True
    if true_like(d.get("custom_fallback", False)):
        entry["custom_fallback"] = True
        if "force_fallback" in d and on_unless_false(d["force_fallback"]):
            entry["force_fallback"] = True
    odd = w.dialect.odd_autocompare(d)
    if odd is not None:
        w.note(f"autocompare: {odd!r} is not one of DIPU's values (disable); DIPU's generator registers"
               " nothing for it from 2024-04-28 on, and compares nothing before; read as disable", "autocompare")
    if not w.dialect.compared(d) and register:
        entry["autocompare"] = False
    if "enable_fallback_to_cpu" in d and not d["enable_fallback_to_cpu"] and not dummy:
        entry["fallback_to_cpu"] = False
    if "generate_device_guard" in d and not on_unless_false(d["generate_device_guard"]):
        entry["device_guard"] = False
    elif isinstance(d.get("device_guard_arg"), str):
        entry["device_guard"] = d["device_guard_arg"]
    for key in ("print_func_call_info", "print_op_args", "use_diopi_adapter", "enable_dipu_extra_feature"):
        if key in d:
            w.note(f"per-op '{key}' is a vendor setting in deeplink-gen; ignored", key)
    return dummy


def _code(w: _Work, op: str, sig: OpSignature, up_returns: tuple[str, ...], call_args: list[str], dummy: bool) -> dict:
    """Custom code, the names it declares (locals, ins, outs, sizes) and return names."""
    d, entry = w.d, w.entry
    code: dict = {}
    unreadable = []
    for key, hook in CODE_KEYS:
        value = d.get(key)
        if value is not None and not isinstance(value, str):
            raise Skip(f"{key} is not text (C++ code, as a YAML string or block)", key)
        if isinstance(value, str) and value.strip() and hook not in code:
            checked = check_placeholders(w.up, key, w.path)
            w.notes += checked.notes
            unreadable += [key] if checked.unreadable else []
            code[hook] = checked.text
    if unreadable:
        raise Skip("custom code has a placeholder DIPU's generator does not replace", unreadable[0])
    code_text = "\n".join(code.values())
    fresh_names = [n for n, r in zip(up_returns, sig.returns) if r.alias is None]
    if up_returns != tuple(r.name for r in sig.returns) and fresh_names and "schema" not in entry:
        entry["returns"] = list(up_returns)
    ins = [str(n) for n in d.get("ins") or []]
    outs = [str(n) for n in d.get("outs") or []]
    ins_names = {n.rstrip("?") for n in ins}
    params = {p.name for p in sig.params}
    size_locals = [n for n in (d.get("size_attr") or []) if n not in params]
    local_names = []
    if fresh_names:
        if "beginning" not in code and not dummy:
            raise Skip(f"{op} returns new values but no custom_code_at_the_beginning declares them")
        names_in_code = set(IDENT.findall(" ".join(code.values())))
        local_names += [n for n in fresh_names if n in names_in_code or "beginning" in code]
    derived = {p + s for p in params for s in set(LOCAL_SUFFIX.values())}
    derived |= {n + HANDLE for n in ins_names | set(outs) | set(fresh_names)}
    derived |= {n + ArgKind.SIZES.local for n in size_locals}
    for a in call_args[1:]:
        for name in referenced_names(a):
            if name in derived and re.search(rf"[\w>&*]\s*[*&]?\s*\b{re.escape(name)}\s*(=|;|\(|\{{)", code_text) \
                    and not re.search(rf"^\s*{re.escape(name)}\s*=", code_text, re.M):
                local_names.append(name)   # the custom code declares a local of that name itself
                continue
            if name in params or name in derived or name in ins_names or name in outs or name in local_names \
                    or name in size_locals or name == "ctx":
                continue
            local_names.append(name)
    if local_names:
        entry["locals"] = list(dict.fromkeys(local_names))
    if ins:
        entry["ins"] = ins
    if outs:
        entry["outs"] = outs
    if size_locals:
        entry["sizes"] = size_locals
    if d.get("no_device_check_args"):
        entry["no_device_check"] = [str(n) for n in d["no_device_check_args"]]
    if code:
        entry["code"] = code
    return code


def _autograd(w: _Work, sig: OpSignature) -> None:
    d = w.d
    if d.get("autograd") != True:  # noqa: E712 -- upstream compares with == True
        for key in AUTOGRAD_KEYS:
            if key in d:
                w.note(f"'{key}' without 'autograd: True' (DIPU's generator ignores it); ignored", key)
                break
        return
    if not isinstance(d.get("backward_schema"), str):
        raise Skip("autograd: True without backward_schema")
    ag: dict = {"backward": schema_name(d["backward_schema"])}
    if isinstance(d.get("forward_schema"), str):
        ag["forward"] = schema_name(d["forward_schema"])
        fwd, _ = parse_schema(d["forward_schema"])
        if fwd is None:
            raise Skip("forward_schema is not an ATen schema", "forward_schema")
        fwd_args = [a.name for a in fwd.arguments.flat_all]
        if fwd_args != [p.name for p in sig.params]:
            ag["forward_args"] = fwd_args
    if d.get("saved_data"):
        ag["saved"] = [str(n) for n in d["saved_data"]]
    for key, name in (("forward_process_code", "forward_code"), ("cal_grad_code", "grad_code"),
                      ("backward_return_code", "return_code"), ("wrappter_custom_return", "wrapper_return")):
        if isinstance(d.get(key), str) and d[key].strip():
            ag[name] = d[key]
    w.entry["autograd"] = ag


def translate(up: Upstream, path: str, table: OpTable, torch_code: str, dialect: Dialect) -> Imported:
    """One upstream entry for the torch of *table*, read as written for *dialect*;
    Imported.op is empty when the entry is skipped."""
    w = _Work(up, path, table, dialect)
    if not isinstance(up.data, dict):
        w.note("entry is not a mapping; entry skipped")
        return Imported(up, "", {}, None, None, False, w.notes)
    _check_keys(w)
    try:
        op, devices, vers = _filters(w, torch_code)
        parsed, found, register = _schema(w, op)
        sig = signature_of(found, written=w.entry.get("schema") if not found.helper else None)
        up_returns = tuple(return_names(parsed))
        interface_fn, call_args = _call(w, op, sig, up_returns)
        dummy = _flags(w, vers, register, torch_code)
        code = _code(w, op, sig, up_returns, call_args, dummy)
        _autograd(w, sig)
    except Skip as skip:
        w.note(f"{skip}; entry skipped", skip.key)
        return Imported(up, "", {}, None, None, False, w.notes)
    w.entry["doc"] = f"imported from {Path(path).name}:{up.line}"
    placeholders = "PREFERRED_MEMORY_FORMAT_PLACEHOLDER" in " ".join(code.values())
    return Imported(up, op, w.entry, devices, interface_fn, placeholders, w.notes)
