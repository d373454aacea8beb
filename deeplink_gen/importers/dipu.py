"""import-dipu: turn DIPU's diopi_functions.yaml (plus optional DIOPI
convert_config.yaml files) into a deeplink-gen workspace: one catalog file and
one vendor file per named vendor.

Upstream semantics (dipu-kernels.md §16) are reproduced where they decide what
a vendor gets: the device filter, the torch_ver filter, the boolean readings of
each key, the rewriting of names inside the interface text, the memory-format
lookup. Problems of the upstream file are reported with their line; each is
either fixed (when the intent is unambiguous) or the entry is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from torchgen.model import FunctionSchema

from deeplink_gen import aten
from deeplink_gen.callexpr import CallSyntaxError, parse_call
from deeplink_gen.errors import Diagnostic, Loc, UserError
from deeplink_gen.model import TorchVersion
from deeplink_gen.signature import Conv, _return_names, signature_of, wrapper_name

# DIPU vendor name -> dipu::devapis::VendorDeviceType enumerator.
DEVICE_TYPES = {
    "cuda": "CUDA", "camb": "MLU", "ascend": "NPU", "muxi": "MUXI", "topsrider": "GCU",
    "droplet": "DROPLET", "supa": "SUPA", "kunlunxin": "KLX",
}

KNOWN_KEYS = {
    "schema", "interface", "custom_code_at_the_beginning", "custom_code", "custom_code_before_call_diopi",
    "custom_code_before_return", "device", "torch_ver", "dummy_call_diopi", "custom_fallback",
    "force_fallback", "enable_autocompare", "enable_fallback_to_cpu", "register_operator",
    "no_device_check_args", "ins", "outs", "size_attr", "autograd", "forward_schema",
    "forward_process_code", "backward_schema", "saved_data", "cal_grad_code", "backward_return_code",
    "wrappter_custom_return", "generate_device_guard", "device_guard_arg", "print_func_call_info",
    "print_op_args", "use_diopi_adapter", "enable_dipu_extra_feature", "current_device",
    "current_torch_ver",
}
CODE_KEYS = ("custom_code_at_the_beginning", "custom_code", "custom_code_before_call_diopi",
             "custom_code_before_return")
AUTOGRAD_KEYS = ("forward_schema", "forward_process_code", "backward_schema", "saved_data",
                 "cal_grad_code", "backward_return_code", "wrappter_custom_return")
LEGACY_KEYS = {"autocompare": "enable_autocompare: false", "register_op": "register_operator: false"}

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, order=True)
class Note:
    """Something about the upstream input, shown as file:line: warning: message."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{Loc(self.file, self.line, 1)}: warning: {self.message}"


@dataclass
class Upstream:
    index: int
    line: int
    data: dict
    key_lines: dict


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


@dataclass
class ImportResult:
    notes: list[Note]
    ops: list[str]
    skipped: int
    vendors: list[str]
    files: list[str]


# ---------------------------------------------------------------- upstream readings

def true_like(value: Any) -> bool:
    """`True` or `"True"` (custom_fallback, dummy_call_diopi)."""
    return value is True or value == "True"


def off_unless_false(value: Any) -> bool:
    """Everything but False/"False" is on (generate_device_guard, force_fallback)."""
    return not (value is False or value == "False")


def device_kept(devices: list, vendor: str) -> bool:
    """§16.3 as implemented: (vendor or 'all' listed) and '-vendor' not listed."""
    return (vendor in devices or "all" in devices) and f"-{vendor}" not in devices


def torch_kept(versions: list, current: str) -> bool:
    """§16.4: exact string compare with the 5-digit version."""
    if f"-{current}" in versions:
        return False
    return "all" in versions or current in versions


def xyyzz(v: TorchVersion) -> str:
    return f"{v.major}{v.minor:02d}{v.patch:02d}"


def torch_gate(versions: list) -> str | None:
    """The deeplink-gen torch: gate for a torch_ver list (None: no gate)."""
    def dotted(code: str) -> str:
        return f"{int(code[:-4])}.{int(code[-4:-2])}.{int(code[-2:])}"
    includes = [v for v in versions if v != "all" and not v.startswith("-")]
    excludes = [v[1:] for v in versions if v.startswith("-")]
    clauses = []
    if "all" not in versions:
        if len(includes) != 1:
            return None
        clauses.append(f"=={dotted(includes[0])}")
    clauses += [f"!={dotted(x)}" for x in excludes]
    return ",".join(clauses) if clauses else None


# ---------------------------------------------------------------- reading

def read_functions(path: Path) -> list[Upstream]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError([Diagnostic(Loc(str(path)), "--functions", f"cannot read: {exc}")]) from None
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.load(text, Loader=yaml.SafeLoader)  # YAML 1.1, as upstream's FullLoader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise UserError([Diagnostic(Loc(str(path), mark.line + 1 if mark else 0, mark.column + 1 if mark else 0),
                                    "(top level)", f"YAML syntax error: {exc.problem}")]) from None
    if not isinstance(root, yaml.SequenceNode) or not isinstance(data, list):
        raise UserError([Diagnostic(Loc(str(path), 1, 1), "(top level)",
                                    "expected a YAML list of op entries (DIPU's diopi_functions.yaml)")])
    out = []
    for i, (node, item) in enumerate(zip(root.value, data)):
        key_lines = {}
        if isinstance(node, yaml.MappingNode):
            for k, _ in node.value:
                key_lines.setdefault(k.value, []).append(k.start_mark.line + 1)
        out.append(Upstream(i, node.start_mark.line + 1, item, key_lines))
    return out


def read_convert_config(path: Path) -> tuple[str | None, dict[str, str], list[Note]]:
    """(common layout, {diopiFn: layout}, notes) -- only what DIPU reads."""
    notes: list[Note] = []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise UserError([Diagnostic(Loc(str(path)), "--convert-config", f"cannot read: {exc}")]) from None
    common, per_fn = None, {}
    for item in data or []:
        if not isinstance(item, dict) or len(item) != 1:
            continue
        (name, cfg), = item.items()
        if not isinstance(cfg, dict) or "layout" not in cfg:
            continue
        layout = cfg["layout"]
        if not isinstance(layout, str):
            notes.append(Note(str(path), 0, f"{name}: layout is not a string; DIPU cannot read it (ignored)"))
            continue
        if name == "common_config":
            common = layout
        else:
            per_fn[name] = layout  # duplicate entries: the last one wins, as in DIOPI
    return common, per_fn, notes


def memory_format_of(layout: str | None) -> str | None:
    """DIPU's substring reading of a layout string (§14); None: no layout."""
    from deeplink_gen.resolve import memory_format_of as reading
    return None if layout is None else reading(layout)


# ---------------------------------------------------------------- translation

def _schema_name(text: str) -> str:
    return text.strip().removeprefix("aten::").split("(", 1)[0].strip()


def _parse_schema(text: str) -> tuple[FunctionSchema | None, str | None]:
    """Parse an upstream schema; fix the known non-ATen spellings (§17 #23)."""
    body = text.strip().removeprefix("aten::")
    try:
        return FunctionSchema.parse(body), None
    except Exception:  # torchgen raises RuntimeError/AssertionError
        pass
    fixed = re.sub(r"->\s*\(\)", "-> ()", body)
    fixed = re.sub(r"->\s*void\s*$", "-> ()", fixed)
    fixed = re.sub(r"const\s+at::ITensorListRef\s*&", "Tensor[]", fixed)
    fixed = re.sub(r"\bat::TensorList\b", "Tensor[]", fixed)
    fixed = re.sub(r"\*\s+(?=[A-Za-z])", "*, ", fixed) if ", * " in fixed else fixed
    if fixed != body:
        try:
            return FunctionSchema.parse(fixed), fixed
        except Exception:
            pass
    return None, None


def _rewrite_expr(expr: str, inputs: set, outputs: set, sizes: set, gens: set, scalars: set) -> str:
    """Upstream rewrote names inside the interface text by kind (§5.2); an
    expression keeps that meaning by naming the converted local explicitly."""
    stripped = expr.strip()
    m = re.fullmatch(r"&\s*([A-Za-z_]\w*)", stripped)
    if m and m.group(1) in scalars:
        return f"&{m.group(1)}DiopiScalar"
    out, pos = [], 0
    for m in _IDENT.finditer(expr):
        name = m.group()
        before = expr[: m.start()].rstrip()
        after = expr[m.end():]
        if before.endswith((".", "->", "::")):
            continue
        follows = re.match(r"\s*([,)]|$)", after)
        suffix = None
        if name in inputs and (follows or after.startswith(" ")):
            suffix = "DiopiTensorHandle"
        elif name in outputs and (before.endswith(("(", ",", "&")) or expr[: m.start()].endswith(" ")):
            suffix = "DiopiTensorHandle"
        elif name in sizes and follows:
            suffix = "DiopiSize"
        elif name in gens and follows:
            suffix = "DiopiGenerator"
        if suffix:
            out.append(expr[pos:m.end()] + suffix)
            pos = m.end()
    out.append(expr[pos:])
    return "".join(out)


def _derive_interface(op: str, sig) -> str:
    """Upstream derives a call from the schema for entries without interface
    (all dummy calls): diopi + CamelCase of the base name."""
    base = op.split(".")[0].strip("_")
    fn = "diopi" + "".join(p[:1].upper() + p[1:] for p in base.split("_") if p)
    outs = [r.name for r in sig.returns if r.alias is None and r.is_tensor]
    args = ["ctx"] + outs + [p.name for p in sig.params]
    return f"{fn}({', '.join(args)})"


def translate(up: Upstream, path: str, torch_code: str) -> Imported | None:
    """One upstream entry -> a catalog entry dict (or None: skipped, with notes)."""
    d = up.data
    notes: list[Note] = []

    def note(msg: str, key: str | None = None) -> None:
        line = up.key_lines.get(key, [up.line])[0] if key else up.line
        notes.append(Note(path, line, msg))

    def skipped(msg: str, key: str | None = None) -> Imported:
        note(msg + "; entry skipped", key)
        return Imported(up, "", {}, None, None, False, notes)

    if not isinstance(d, dict):
        return skipped("entry is not a mapping")
    for key, lines in up.key_lines.items():
        if len(lines) > 1:
            notes.append(Note(path, lines[1], f"duplicate key '{key}' (upstream keeps the last value; so do we)"))
    for key in d:
        if key in LEGACY_KEYS:
            note(f"'{key}' is ignored by DIPU's generator (it reads {LEGACY_KEYS[key]}); ignored", key)
        elif key not in KNOWN_KEYS:
            note(f"unknown key '{key}' (DIPU's generator ignores it silently); ignored", key)
    if "schema" not in d or not isinstance(d["schema"], str):
        return skipped("no schema string (DIPU's generator crashes with KeyError)")
    op = _schema_name(d["schema"])
    devices = d.get("device")
    if devices is not None and not isinstance(devices, list):
        return skipped("device: must be a list (DIPU's generator crashes on a plain string)", "device")
    vers = d.get("torch_ver")
    if vers is not None:
        if not isinstance(vers, list) or not all(isinstance(v, str) for v in vers):
            return skipped("torch_ver: must be a list of strings (DIPU's generator crashes on ints)", "torch_ver")
        if not torch_kept(vers, torch_code):
            return skipped(f"torch_ver {vers} does not select torch {torch_code}", "torch_ver")
    parsed, fixed = _parse_schema(d["schema"])
    known = aten.lookup(op)
    if parsed is None and known is not None:
        # The op exists: torch's schema is meant when the argument names agree.
        written = re.findall(r"(\w+)\s*(?:=[^,)]*)?\s*(?=[,)])", d["schema"].split("->")[0].split("(", 1)[-1])
        if written == [a.name for a in known.func.arguments.flat_all]:
            parsed, fixed = known.func, known.schema
    if parsed is None:
        return skipped(f"schema does not parse as an ATen schema: {d['schema']!r}", "schema")
    if fixed is not None:
        note(f"schema is not a valid ATen schema; read as {fixed!r} (fixed)", "schema")
    register = not ("register_operator" in d and not d["register_operator"])
    entry: dict = {}
    found = aten.lookup(op)
    if found is None and register and "register_op" in d and not d["register_op"]:
        # Older files spell it register_op (ignored by DIPU's generator since it was renamed); an op
        # torch does not have cannot be registered anyway, so the intent is unambiguous.
        note(f"'{op}' is not an op of torch and says register_op: False (the old spelling);"
             " read as register_operator: False (fixed)", "register_op")
        register = False
    if found is None:
        if register:
            return skipped(f"'{op}' is not an op of the installed torch", "schema")
        note(f"'{op}' is not an op of torch; imported as an unregistered helper with its schema", "schema")
        entry["schema"] = str(parsed)
        found = aten.AtenOp(op, str(parsed), ("function",))
    sig = signature_of(found)
    up_returns = tuple(_return_names(parsed))
    renamed: dict[str, str] = {}
    if fixed is None and found.schema != str(parsed) and aten.lookup(op) is not None:
        up_args = [a.name for a in parsed.arguments.flat_all]
        torch_args = [p.name for p in sig.params]
        has_code = any(isinstance(d.get(k), str) and d[k].strip() for k in CODE_KEYS)
        if up_args != torch_args and len(up_args) == len(torch_args) and not has_code:
            # Same arguments under other names (e.g. lerp's input vs self): the call means them by position.
            renamed = {u: t for u, t in zip(up_args, torch_args) if u != t}
            note(f"argument names differ from torch's {found.schema}; the call is read with torch's names"
                 f" ({', '.join(f'{u} -> {t}' for u, t in renamed.items())}) (fixed)", "schema")
        elif up_args != torch_args:
            note(f"argument names differ from torch's {found.schema}; custom code may not compile", "schema")
    # ---- call
    interface = d.get("interface")
    fresh_names = [n for n, r in zip(up_returns, sig.returns) if r.alias is None]
    if isinstance(interface, str):
        text = interface.strip().rstrip(";").strip()
    else:
        text = _derive_interface(op, sig)
        note(f"no interface: call derived from the schema as {text}", "schema")
    try:
        fn, args = parse_call(text)
    except CallSyntaxError as exc:
        return skipped(f"interface is not a call ({exc})", "interface")
    if renamed:
        args = [type(a)(_IDENT.sub(lambda m: renamed.get(m.group(), m.group()), a.text)) for a in args]
    size_attr = list(d.get("size_attr") or [])
    ins = [str(n) for n in d.get("ins") or []]
    outs = [str(n) for n in d.get("outs") or []]
    params = {p.name: p for p in sig.params}
    ins_names = {n.rstrip("?") for n in ins}
    inputs = {n for n, p in params.items() if p.conv in (Conv.TENSOR, Conv.OPT_TENSOR)} | ins_names
    outputs = {n for n, p in params.items() if p.conv == Conv.MUT_TENSOR} | set(outs)
    outputs |= {n for n, r in zip(up_returns, sig.returns) if r.alias is None and r.is_tensor}
    size_locals = [n for n in size_attr if n not in params]
    sizes = {n for n in size_attr} | {n for n, p in params.items() if p.conv == Conv.SYMINT_LIST}
    gens = {n for n, p in params.items() if p.conv == Conv.GENERATOR}
    scalars = {n for n, p in params.items() if p.conv in (Conv.SCALAR,)}
    call_args = []
    for i, a in enumerate(args):
        t = a.text
        if i == 0 and t.replace(" ", "") == "&context":
            note("the DIOPI context is written '&context'; passed as ctx (fixed)", "interface")
            t = "ctx"
        elif not t.isidentifier():
            t = _rewrite_expr(t, inputs, outputs, sizes, gens, scalars)
        elif t in params and params[t].conv in (Conv.INT_LIST, Conv.OPT_INT_LIST) and t not in size_attr:
            note(f"'{t}' is an int[] passed without size_attr (raw at::IntArrayRef upstream);"
                 " converted to diopiSize_t (fixed)", "interface")
        call_args.append(t)
    entry["call"] = f"{fn}({', '.join(call_args)})"
    # ---- flags
    if vers is not None:
        gate = torch_gate(vers)
        if gate is None and ("all" not in vers):
            return skipped(f"torch_ver {vers} cannot be written as one torch: condition", "torch_ver")
        if gate:
            entry["torch"] = gate
    if not register:
        entry["register"] = False
    dummy = true_like(d.get("dummy_call_diopi", False))
    if dummy:
        entry["dummy_call"] = True
    if true_like(d.get("custom_fallback", False)):
        entry["custom_fallback"] = True
        if "force_fallback" in d and off_unless_false(d["force_fallback"]):
            entry["force_fallback"] = True
    if "enable_autocompare" in d and not d["enable_autocompare"] and register:
        entry["autocompare"] = False
    if "enable_fallback_to_cpu" in d and not d["enable_fallback_to_cpu"] and not dummy:
        entry["fallback_to_cpu"] = False
    if "generate_device_guard" in d and not off_unless_false(d["generate_device_guard"]):
        entry["device_guard"] = False
    elif isinstance(d.get("device_guard_arg"), str):
        entry["device_guard"] = d["device_guard_arg"]
    for key in ("print_func_call_info", "print_op_args", "use_diopi_adapter", "enable_dipu_extra_feature"):
        if key in d:
            note(f"per-op '{key}' is a vendor setting in deeplink-gen; ignored", key)
    # ---- custom code
    code = {}
    for key, hook in (("custom_code_at_the_beginning", "beginning"), ("custom_code", "beginning"),
                      ("custom_code_before_call_diopi", "before_call"),
                      ("custom_code_before_return", "before_return")):
        value = d.get(key)
        if isinstance(value, str) and value.strip() and hook not in code:
            code[hook] = value
    names_in_code = set(_IDENT.findall(" ".join(code.values())))
    if up_returns != tuple(r.name for r in sig.returns) and fresh_names:
        entry["returns"] = list(up_returns)
    local_names = []
    if fresh_names:
        if "beginning" not in code and not dummy:
            return skipped(f"{op} returns new values but no custom_code_at_the_beginning declares them")
        local_names += [n for n in fresh_names if n in names_in_code or "beginning" in code]
    derived = set()
    for p in sig.params:
        derived |= {p.name + s for s in ("DiopiTensorHandle", "DiopiScalar", "DiopiScalarPtr", "DiopiSize",
                                          "DiopiGenerator")}
    derived |= {n + "DiopiTensorHandle" for n in ins_names | set(outs) | set(fresh_names)}
    derived |= {n + "DiopiSize" for n in size_locals}
    from deeplink_gen.callexpr import referenced_names
    code_text = "\n".join(code.values())
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
    # ---- autograd
    if d.get("autograd") == True:  # noqa: E712 -- upstream compares with == True
        if not isinstance(d.get("backward_schema"), str):
            return skipped("autograd: True without backward_schema")
        ag: dict = {"backward": _schema_name(d["backward_schema"])}
        if isinstance(d.get("forward_schema"), str):
            ag["forward"] = _schema_name(d["forward_schema"])
            fwd, _ = _parse_schema(d["forward_schema"])
            if fwd is None:
                return skipped("forward_schema is not an ATen schema", "forward_schema")
            fwd_args = [a.name for a in fwd.arguments.flat_all]
            if fwd_args != [p.name for p in sig.params]:
                ag["forward_args"] = fwd_args
        if d.get("saved_data"):
            ag["saved"] = [str(n) for n in d["saved_data"]]
        for key, name in (("forward_process_code", "forward_code"), ("cal_grad_code", "grad_code"),
                          ("backward_return_code", "return_code"), ("wrappter_custom_return", "wrapper_return")):
            if isinstance(d.get(key), str) and d[key].strip():
                ag[name] = d[key]
        entry["autograd"] = ag
    else:
        for key in AUTOGRAD_KEYS:
            if key in d:
                note(f"'{key}' without 'autograd: True' (DIPU's generator ignores it); ignored", key)
                break
    entry["doc"] = f"imported from {Path(path).name}:{up.line}"
    placeholders = "PREFERRED_MEMORY_FORMAT_PLACEHOLDER" in " ".join(code.values())
    return Imported(up, op, entry, devices, fn if isinstance(interface, str) else None, placeholders, notes)


# ---------------------------------------------------------------- workspace

class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper, value: str):
    style = "|" if "\n" in value and not any(line != line.rstrip() for line in value.split("\n")) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def _dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1000,
                     default_flow_style=False)


def _write(path: Path, header: str, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(header + _dump(data), encoding="utf-8")


_OP_PATH = re.compile(r"^ops(?:\[([^\]]+)\]|\.([A-Za-z_]\w*))")


def import_dipu(functions: Path, convert_configs: dict[str, Path], vendors: list[str], out: Path,
                torch_version: TorchVersion) -> ImportResult:
    from deeplink_gen import workspace

    path = str(functions)
    ups = read_functions(functions)
    torch_code = xyyzz(torch_version)
    notes: list[Note] = []
    layouts = {}
    for v, cfg in sorted(convert_configs.items()):
        common, per_fn, cfg_notes = read_convert_config(cfg)
        layouts[v] = (common, per_fn)
        notes += cfg_notes
    imported: list[Imported] = []
    for up in ups:
        item = translate(up, path, torch_code)
        notes += item.notes
        if item.op:
            imported.append(item)
    # autograd forward_schema may name the op itself under another name with the same wrapper
    # (DIPU calls dipu_<name>): point it at the imported op.
    by_wrapper = {wrapper_name(i.op): i.op for i in imported}
    for item in imported:
        ag = item.entry.get("autograd")
        if ag and "forward" in ag and ag["forward"] not in by_wrapper.values():
            target = by_wrapper.get(wrapper_name(ag["forward"]))
            if target is not None:
                item.notes.append(Note(path, item.up.line, f"forward_schema '{ag['forward']}' is not an op; its wrapper"
                                                           f" dipu_{wrapper_name(ag['forward'])[5:]} is {target}'s (fixed)"))
                notes.append(item.notes[-1])
                ag["forward"] = target
    # One catalog entry per op: the definition the named vendors select (§16.3).
    groups: dict[str, list[Imported]] = {}
    for item in imported:
        groups.setdefault(item.op, []).append(item)
    catalog: dict[str, dict] = {}
    overrides: dict[str, dict[str, dict]] = {v: {} for v in vendors}
    origin: dict[str, Imported] = {}
    replaced: dict[str, dict[str, Imported]] = {}     # op -> vendor -> its own upstream entry
    for op, items in groups.items():
        choice: dict[str, Imported | None] = {}
        for v in vendors:
            kept = [i for i in items if i.devices is None or device_kept(i.devices, v)]
            if len(kept) > 1:
                notes.append(Note(path, kept[1].up.line,
                                  f"'{op}' is defined again (first at line {kept[0].up.line}) for the same"
                                  " vendors; DIPU's generator emits both (C++ redefinition); the first is used"))
            choice[v] = kept[0] if kept else None
        used = [i for i in items if any(c is i for c in choice.values())]
        if not used:
            for i in items:
                notes.append(Note(path, i.up.line, f"'{op}': device {i.devices} selects none of"
                                                   f" {', '.join(vendors)}; entry skipped"))
            continue
        for i in items:
            if i not in used and not any(i is k for k in items if k.devices is None):
                notes.append(Note(path, i.up.line, f"'{op}': device {i.devices} selects none of"
                                                   f" {', '.join(vendors)}; not imported"))
        best = max(used, key=lambda i: (sum(c is i for c in choice.values()),
                                        -min(vendors.index(v) for v in vendors if choice[v] is i)))
        entry = dict(best.entry)
        devices = best.devices
        if devices is not None and "all" not in devices:
            entry = {"call": entry.pop("call"), "enabled": False, **entry}
        catalog[op] = entry
        origin[op] = best
        line = best.up.line
        for v in vendors:
            mine = choice[v]
            kept = mine is best
            default_on = "enabled" not in entry
            if mine is not None and not kept:
                # Another upstream entry defines the op for this vendor: it replaces the catalog's.
                replacement = {k: val for k, val in mine.entry.items() if k != "enabled"}
                overrides[v][op] = {"replace": replacement,
                                    "reason": f"upstream defines {op} for {v} at line {mine.up.line}"
                                              f" (device {mine.devices}); the catalog has line {line}"}
                if not default_on:
                    overrides[v][op]["enabled"] = True
                replaced.setdefault(op, {})[v] = mine
            elif kept != default_on:
                overrides[v][op] = {"enabled": kept, "reason": f"upstream device filter {devices} at line {line}"}
            if mine is not None and mine.has_placeholders and mine.interface_fn and v in layouts:
                common, per_fn = layouts[v]
                fmt = memory_format_of(per_fn.get(mine.interface_fn, common))
                if fmt is not None:
                    overrides[v].setdefault(op, {})["memory_format"] = fmt
    # Write, validate, drop what deeplink-gen rejects, until the workspace loads.
    for _ in range(50):
        files = _write_workspace(out, catalog, overrides, vendors, path)
        try:
            workspace.load(out)
            break
        except UserError as exc:
            bad: dict[str, Diagnostic] = {}
            bad_replacements: dict[tuple[str, str], Diagnostic] = {}
            for diag in exc.diagnostics:
                m = _OP_PATH.match(diag.path)
                op = m and (m.group(1) or m.group(2))
                vendor = Path(diag.loc.file).stem if Path(diag.loc.file).parent.name == "vendors" else None
                if op and vendor in overrides and "replace" in overrides[vendor].get(op, {}):
                    bad_replacements.setdefault((op, vendor), diag)
                elif op in catalog:
                    bad.setdefault(op, diag)
            if not bad and not bad_replacements:
                raise
            for (op, vendor), diag in bad_replacements.items():
                mine = replaced[op][vendor]
                notes.append(Note(path, mine.up.line, f"'{op}' for {vendor} is not valid for deeplink-gen:"
                                                      f" {diag.message}; the op is disabled for {vendor}"))
                overrides[vendor][op] = {"enabled": False, "reason": f"upstream line {mine.up.line} cannot be imported"}
            for op, diag in bad.items():
                notes.append(Note(path, origin[op].up.line,
                                  f"'{op}' is not valid for deeplink-gen: {diag.message}; entry skipped"))
                del catalog[op]
                for v in vendors:
                    overrides[v].pop(op, None)
    notes = sorted(set(notes))
    return ImportResult(notes, list(catalog), len(ups) - len(catalog), vendors, files)


def _write_workspace(out: Path, catalog: dict, overrides: dict, vendors: list[str], source: str) -> list[str]:
    name = Path(source).name
    files = []
    cat_path = out / "catalog" / "dipu.yaml"
    _write(cat_path, "# yaml-language-server: $schema=../schemas/catalog.schema.json\n"
                     f"# Imported by deeplink-gen import-dipu from DIPU's {name}.\n",
           {"ops": catalog})
    files.append(str(cat_path))
    for v in vendors:
        body: dict = {"vendor": {"name": v, "device_type": DEVICE_TYPES.get(v, v.upper()),
                                 "cmake_aliases": [v.upper(), v], "diopi_impl": v}}
        if overrides[v]:
            body["ops"] = overrides[v]
        vpath = out / "vendors" / f"{v}.yaml"
        _write(vpath, "# yaml-language-server: $schema=../schemas/vendor.schema.json\n"
                      f"# Imported by deeplink-gen import-dipu from DIPU's {name}.\n", body)
        files.append(str(vpath))
    return files
