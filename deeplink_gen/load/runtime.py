"""The `runtime:` and `build:` sections of a vendor file (already
schema-checked) into the runtime model. Shape errors that the schema cannot
express are reported here; cross-references are checked in validate/runtime.py."""

from __future__ import annotations

from deeplink_gen.errors import Diagnostics
from deeplink_gen.interfaces.dipu import COMM_FUNCTIONS, DEVICE_FUNCTIONS
from deeplink_gen.yamlfile import Document
from deeplink_gen.model import (
    BuildSpec, CallTemplate, Checker, CommSpec, DiopiTestSpec, DipuFunction, GeneratorSpec, HandleTypes, Impl,
    Located, RuntimeSpec, Toolkit, VendorApi,
)
from deeplink_gen.load.prune import gone
from deeplink_gen.model.patterns import TEMPLATE_PARTS, Pattern
from deeplink_gen.model.runtime import GeneratorKind, ImplKind, OnFailure

NO_CHECKER = "none"
_TEMPLATE_KEYS = tuple(part.value for part in TEMPLATE_PARTS)


def _list(value) -> tuple:
    if value is None:
        return ()
    return tuple(value) if isinstance(value, list) else (value,)


def _text(doc: Document, where: tuple, raw: dict, key: str) -> Located[str] | None:
    """The C++ text under *key*, from where it starts; None when it is not written."""
    return Located(raw[key], doc.text_loc(where + (key,))) if key in raw else None


def parse_impl(doc: Document, where: tuple, fn: DipuFunction, raw, diags: Diagnostics) -> Impl:
    """Without a checker of its own, an implementation's calls go through its
    section's (RuntimeSpec.checker_name)."""
    loc = doc.loc(where)
    if isinstance(raw, str):
        if raw in (ImplKind.NOOP.value, ImplKind.UNSUPPORTED.value):
            return Impl(fn, ImplKind(raw), loc)
        return Impl(fn, ImplKind.CALL, loc, calls=(CallTemplate(raw, loc, is_call=True),))

    def tpl(key, *, call=False, index=None):
        path = where + (key,) + ((index,) if index is not None else ())
        value = raw[key] if index is None else raw[key][index]
        return CallTemplate(value, doc.loc(path), is_call=call)

    checker = None
    if "checker" in raw:
        checker = Located(None if raw["checker"] == NO_CHECKER else raw["checker"], doc.loc(where + ("checker",)))
    calls: list[CallTemplate] = []
    if "call" in raw:
        calls.append(tpl("call", call=True))
    if "calls" in raw:
        calls += [tpl("calls", call=True, index=i) for i in range(len(raw["calls"]))]
    common = dict(
        calls=tuple(calls), checker=checker,
        locals=tuple((k, v) for k, v in (raw.get("locals") or {}).items()),
        ret=tpl("return") if "return" in raw else None,
        guard=tpl("guard") if "guard" in raw else None,
        presync=bool(raw.get("presync", False)),
    )
    if "custom" in raw:
        extra = sorted(set(raw) - {"custom"})
        if extra:
            diags.add(doc.loc(where + (extra[0],), key=True), where + (extra[0],),
                      "a custom body stands alone; remove the other keys")
        return Impl(fn, ImplKind.CUSTOM, loc, custom=_text(doc, where, raw, "custom"))
    if "pattern" in raw:
        return Impl(
            fn, ImplKind.PATTERN, loc, pattern=Pattern(raw["pattern"]),
            templates=tuple((part, tpl(part.value, call=True)) for part in TEMPLATE_PARTS if part.value in raw),
            fields=tuple((k, CallTemplate(v, doc.loc(where + ("fields", k))))
                         for k, v in (raw.get("fields") or {}).items()),
            sets=tuple((k, CallTemplate(v, doc.loc(where + ("set", k)))) for k, v in (raw.get("set") or {}).items()),
            sentinels=_list(raw.get("sentinels")), ready=_list(raw.get("ready")),
            status_type=raw.get("status_type"),
            **common,
        )
    stray = sorted(set(raw) & set(_TEMPLATE_KEYS + ("fields", "set", "sentinels", "ready", "status_type")))
    if stray:
        diags.add(doc.loc(where + (stray[0],), key=True), where + (stray[0],),
                  f"'{stray[0]}' belongs to a pattern; add pattern: <tag>")
    if not calls and "return" not in raw:
        diags.add(loc, where, "give call, calls, return, pattern or custom")
    return Impl(fn, ImplKind.CALL, loc, **common)


def _impls(doc: Document, where: tuple, functions: tuple[DipuFunction, ...], raw: dict,
           diags: Diagnostics) -> tuple[Impl, ...]:
    out = []
    for fn in functions:
        if fn.key in raw:
            out.append(parse_impl(doc, where + (fn.key,), fn, raw[fn.key], diags))
    return tuple(out)


def _checker(doc: Document, where: tuple, raw: dict) -> Located[str] | None:
    """The checker a section's calls go through unless a function names its own; None when it names none."""
    return Located(raw["checker"], doc.loc(where + ("checker",))) if raw.get("checker") else None


def parse_runtime(doc: Document, diags: Diagnostics) -> RuntimeSpec | None:
    raw = doc.data.get("runtime")
    if raw is None:
        return None
    t = raw["types"]
    types = HandleTypes(t["stream"], t["event"], t["comm"], t["unique_id"], t.get("default_stream", "nullptr"),
                        t.get("handle"), doc.loc(("runtime", "types")),
                        tuple((key, doc.loc(("runtime", "types", key))) for key in sorted(t)))
    checkers = []
    for name, c in sorted((raw.get("checkers") or {}).items()):
        where = ("runtime", "checkers", name)
        checkers.append(Checker(
            name=name, macro=c["macro"], status=c["status"], success=_list(c["success"]),
            not_ready=_list(c.get("not_ready")), out_of_memory=c.get("out_of_memory"),
            clear_error=c.get("clear_error"), message_fn=c.get("message_function"),
            message_call=(CallTemplate(c["message_call"], doc.loc(where + ("message_call",)), is_call=True)
                          if "message_call" in c else None),
            on_failure=OnFailure(c.get("on_failure", OnFailure.TORCH_CHECK.value)), loc=doc.loc(where, key=True),
            macro_loc=doc.loc(where + ("macro",)),
        ))
    dev = raw.get("device") or {}
    device_impls = _impls(doc, ("runtime", "device", "functions"), DEVICE_FUNCTIONS, dev.get("functions") or {}, diags)
    cm = raw["comm"]
    comm = CommSpec(
        checker=_checker(doc, ("runtime", "comm"), cm),
        unique_id_bytes=str(cm["unique_id_bytes"]),
        dtype_type=cm["dtype_type"], reduce_op_type=cm["reduce_op_type"],
        dtypes=tuple(sorted((cm.get("dtypes") or {}).items())),
        reduce_ops=tuple(sorted((cm.get("reduce_ops") or {}).items())),
        impls=_impls(doc, ("runtime", "comm", "functions"), COMM_FUNCTIONS, cm.get("functions") or {}, diags),
        prelude=_text(doc, ("runtime", "comm"), cm, "prelude"),
        loc=doc.loc(("runtime", "comm"), key=True),
        functions_loc=doc.loc(("runtime", "comm", "functions"), key=True),
        includes=tuple(cm.get("includes") or ()),
    )
    g = raw.get("generator") or {"kind": "seed_offset"}
    generator = GeneratorSpec(GeneratorKind(g["kind"]), _text(doc, ("runtime", "generator"), g, "code"),
                              doc.loc(("runtime", "generator")), tuple(g.get("includes") or ()))
    if generator.includes and generator.kind is not GeneratorKind.CUSTOM:
        diags.add(doc.loc(("runtime", "generator", "includes")), ("runtime", "generator", "includes"),
                  "includes: is for the headers of kind: custom code; kind: seed_offset includes its own")
    if generator.kind is GeneratorKind.CUSTOM and not (generator.code and generator.code.value):
        diags.add(generator.loc, ("runtime", "generator"), "kind: custom needs code: (C++ defining vendorMakeGenerator)")
    dt = raw.get("diopi_test") or {}
    dwhere = ("runtime", "diopi_test")
    diopi_test = DiopiTestSpec(
        init=tuple(CallTemplate(v, doc.loc(dwhere + ("init", i)), is_call=True) for i, v in enumerate(dt.get("init") or [])),
        finalize=tuple(CallTemplate(v, doc.loc(dwhere + ("finalize", i)), is_call=True)
                       for i, v in enumerate(dt.get("finalize") or [])),
        overrides=tuple(sorted((k, CallTemplate(v, doc.loc(dwhere + ("functions", k)), is_call=True))
                               for k, v in (dt.get("functions") or {}).items())),
        checker=Located(dt["checker"], doc.loc(dwhere + ("checker",))) if "checker" in dt else None,
        loc=doc.loc(dwhere),
    )
    va = raw.get("vendorapi") or {}
    vendorapi = VendorApi(tuple(va.get("includes") or ()), _text(doc, ("runtime", "vendorapi"), va, "code"),
                          doc.loc(("runtime", "vendorapi"), key=True))
    return RuntimeSpec(
        headers=tuple(raw.get("headers") or ()), types=types, checkers=tuple(checkers),
        device_checker=_checker(doc, ("runtime", "device"), dev),
        memcpy_kinds=tuple(sorted((dev.get("memcpy_kinds") or {}).items())),
        device_impls=device_impls, device_prelude=_text(doc, ("runtime", "device"), dev, "prelude"),
        device_includes=tuple(dev.get("includes") or ()),
        comm=comm, generator=generator, diopi_test=diopi_test, vendorapi=vendorapi,
        loc=doc.loc(("runtime",), key=True),
        device_functions_loc=doc.loc(("runtime", "device", "functions"), key=True),
    )


def parse_build(doc: Document) -> BuildSpec | None:
    raw = doc.data.get("build")
    if raw is None:
        return None
    t = raw.get("toolkit")
    toolkit = None if t is None else Toolkit(
        name=Located(t["name"], doc.loc(("build", "toolkit", "name"))),
        root_vars=tuple(t.get("root_vars") or ()), default_roots=tuple(t.get("default_roots") or ()),
        include_suffixes=tuple(t.get("include_suffixes") or ("include",)),
        lib_suffixes=tuple(t.get("lib_suffixes") or ("lib64", "lib")),
        headers=tuple(t["headers"]), libraries=tuple(t.get("libraries") or ()),
        loc=doc.loc(("build", "toolkit"), key=True),
    )
    return BuildSpec(toolkit, tuple(raw.get("link") or ()), tuple(raw.get("sources") or ("*.cpp",)),
                     _hand_written(doc, raw), doc.loc(("build",), key=True))


def _hand_written(doc: Document, raw: dict) -> tuple[Located[str], ...] | None:
    """The files build.hand_written names, each where it is named; a list the schema took
    out names none (not every file of the folder, which a list left out means)."""
    if "hand_written" in raw:
        return tuple(Located(rel, doc.loc(("build", "hand_written", i))) for i, rel in enumerate(raw["hand_written"]))
    return () if gone(("build", "hand_written"), doc.rejected) else None
