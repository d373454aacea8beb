"""A vendor file (vendors/<name>.yaml), already schema-checked, into a Vendor."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any

import yaml

from deeplink_gen import inputfile
from deeplink_gen.errors import Diagnostics, Loc, ParseError, UserError
from deeplink_gen.load.catalog import parse_entry
from deeplink_gen.load.runtime import parse_build, parse_runtime
from deeplink_gen.yamlfile import Document
from deeplink_gen.model import (
    SWITCHES, DiopiTestRule, DisabledClass, DisabledTest, Precision, DtypeRules, FunctionDtypes, FunctionLayouts, Implemented, LayoutRules,
    BuildSpec, Located, Namespace, OpOverride, Rule, SourceFile, TensorSkip, TestConfig, TorchGate, Vendor, VendorIdentity,
)
from deeplink_gen.model.dtypes import DTYPES
from deeplink_gen.model.testconfig import TOLERANCES
from deeplink_gen.input_paths import MAX_HAND_WRITTEN, hand_written_dir


def parse_identity(doc: Document) -> VendorIdentity:
    ident = doc.data["vendor"]
    name = ident["name"]
    return VendorIdentity(
        name=Located(name, doc.loc(("vendor", "name"))),
        device_type=Located(ident["device_type"], doc.loc(("vendor", "device_type"))),
        cmake_aliases=Located(tuple(ident.get("cmake_aliases") or (name.upper(), name)),
                              doc.loc(("vendor", "cmake_aliases"))),
        diopi_impl=Located(ident.get("diopi_impl", name), doc.loc(("vendor", "diopi_impl"))),
        description=ident.get("description", ""),
        loc=doc.loc(("vendor",), key=True),
    )


# defaults: keys about how the kernels build, not about each op (Vendor fields of these names).
_BUILD_DEFAULTS = ("shards", "precompiled_header")


def parse_vendor(doc: Document, diags: Diagnostics) -> Vendor:
    raw = doc.data
    identity = parse_identity(doc)
    defaults_raw = raw.get("defaults") or {}
    builds = {k: Located(defaults_raw[k], doc.loc(("defaults", k))) for k in _BUILD_DEFAULTS if k in defaults_raw}
    defaults = tuple((k, Located(v, doc.loc(("defaults", k)))) for k, v in sorted(defaults_raw.items())
                     if k not in _BUILD_DEFAULTS)
    overrides = tuple(_override(doc, op, o, diags) for op, o in (raw.get("ops") or {}).items())
    runtime, build = parse_runtime(doc, diags), parse_build(doc)
    return Vendor(doc.path, identity, defaults, overrides, dtypes=parse_dtypes(doc), layouts=parse_layouts(doc),
                  implemented=parse_implemented(doc),
                  tests=parse_tests(doc, diags), runtime=runtime, build=build, **builds,
                  sources=read_sources(doc.path, build, diags), rejected=frozenset(doc.rejected),
                  diopi_library=Located(raw["diopi_library"], doc.loc(("diopi_library",)))
                  if "diopi_library" in raw else None)


SOURCES_README = "README.md"


def read_sources(vendor_path: str, build: BuildSpec | None, diags: Diagnostics) -> tuple[SourceFile, ...]:
    """The files build.hand_written names, else every file of vendors/<name>/ except its
    top-level README.md (hidden files and folders skipped), in path order; what is not a
    readable regular file is an error in *diags*."""
    folder = hand_written_dir(vendor_path)
    if build is not None and build.hand_written is not None:
        return _read_listed(folder, build.hand_written, diags)
    if not folder.is_dir():
        return ()
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        found += [Path(dirpath) / name for name in filenames]
        if len(found) > MAX_HAND_WRITTEN:
            diags.add(Loc(vendor_path, 1, 1), ("(sources)",), (
                f"vendors/{folder.name}/ holds more than {MAX_HAND_WRITTEN} files; it is the vendor's hand-written "
                "sources, which render copies into DIPU: keep only those there"))
            return ()
    out = []
    real = folder.resolve()
    for path in sorted(found):
        rel = path.relative_to(folder)
        if path.is_dir() or rel.as_posix() == SOURCES_README or any(p.startswith(".") for p in rel.parts):
            continue
        try:
            inside = path.resolve().is_relative_to(real)
        except (OSError, RuntimeError):       # RuntimeError: a loop of links, which the read reports
            inside = True
        if not inside:      # as for a listed file: what render copies into DIPU is this folder's
            diags.add(Loc(str(path), 1, 1), ("(sources)",),
                      _leads_out(f"vendors/{folder.name}/{rel.as_posix()}", folder))
            continue
        try:
            out.append(SourceFile(rel.as_posix(), inputfile.read(path, key="(sources)"), Loc(str(path), 1, 1)))
        except UserError as exc:
            diags.extend(exc.diagnostics)
    return tuple(out)


def _leads_out(shown: str, folder: Path) -> str:
    """Why the hand-written file *shown* of *folder*, a link leading out of it, is not read."""
    return f"{shown} is a link that leads outside vendors/{folder.name}/; copy the file into the folder"


def _read_listed(folder: Path, listed: tuple[Located[str], ...], diags: Diagnostics) -> tuple[SourceFile, ...]:
    """Each file named (once: a second naming is validate's to report), read through links
    that stay inside *folder*; a problem is reported where the file is named."""
    out, seen = [], set()
    real = folder.resolve()
    for i, item in enumerate(listed):
        if item.value in seen:
            continue
        seen.add(item.value)
        key, path = ("build", "hand_written", i), folder / item.value
        shown = f"vendors/{folder.name}/{item.value}"
        try:
            inside = path.resolve().is_relative_to(real)
        except (OSError, RuntimeError) as exc:       # RuntimeError: a loop of links
            diags.add(item.loc, key, f"cannot follow the links of {shown}: {exc}")
            continue
        if not os.path.lexists(path):
            diags.add(item.loc, key, f"no file {shown}; hand-written files live in vendors/{folder.name}/")
        elif not inside:
            diags.add(item.loc, key, _leads_out(shown, folder))
        else:
            try:
                out.append(SourceFile(item.value, inputfile.read(path), Loc(str(path), 1, 1)))
            except UserError as exc:
                diags.add(item.loc, key, f"{shown}: {exc.diagnostics[0].message}")
    return tuple(out)


def torch_gate(doc: Document, where: tuple, raw: dict, diags: Diagnostics) -> TorchGate | None:
    """The torch: gate of the mapping at *where*, if it has one."""
    if "torch" not in raw:
        return None
    try:
        return TorchGate.parse(raw["torch"], doc.loc(where + ("torch",)))
    except ParseError as exc:
        diags.add(doc.loc(where + ("torch",)), where + ("torch",), str(exc))
        return None


def _override(doc: Document, op: str, o: dict, diags: Diagnostics) -> OpOverride:
    where = ("ops", op)

    def located(key: str):
        return Located(o[key], doc.loc(where + (key,))) if key in o else None

    replace = parse_entry(doc, op, o["replace"], diags, where + ("replace",)) if "replace" in o else None
    return OpOverride(
        op=op, loc=doc.loc(where, key=True), enabled=located("enabled"),
        switches=tuple((k, located(k)) for k in SWITCHES if k in o),
        reason=o.get("reason", ""), register=located("register"), memory_format=located("memory_format"),
        replace=replace, torch=torch_gate(doc, where, o, diags),
    )


# ---------------------------------------------------------------- dtypes and layouts

def _rules(doc: Document, where: tuple, raw: dict | None, level: str) -> tuple[Rule, ...]:
    return tuple(Rule(src, dst, doc.loc(where + (src,), key=True), level)
                 for src, dst in sorted((raw or {}).items(), key=lambda kv: DTYPES.index(kv[0])))


def parse_dtypes(doc: Document) -> DtypeRules:
    raw = doc.data.get("dtypes") or {}
    supported = Located(tuple(raw["supported"]), doc.loc(("dtypes", "supported"))) if "supported" in raw else None
    functions = []
    for fn, body in sorted((raw.get("functions") or {}).items()):
        where = ("dtypes", "functions", fn)
        tensors = tuple(
            (t, doc.loc(where + ("tensors", t), key=True), _rules(doc, where + ("tensors", t), r, "tensor"))
            for t, r in sorted((body.get("tensors") or {}).items()))
        functions.append(FunctionDtypes(fn, doc.loc(where, key=True),
                                        _rules(doc, where + ("convert",), body.get("convert"), "function"), tensors))
    pass_through = (Located(tuple(raw["pass_through"]), doc.loc(("dtypes", "pass_through")))
                    if "pass_through" in raw else None)
    return DtypeRules(supported, _rules(doc, ("dtypes", "convert"), raw.get("convert"), "common"), tuple(functions),
                      pass_through)


def parse_layouts(doc: Document) -> LayoutRules:
    raw = doc.data.get("layouts") or {}
    functions = []
    for fn, body in sorted((raw.get("functions") or {}).items()):
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
        functions.append(FunctionLayouts(fn, doc.loc(where, key=True), prefer, tensors, contiguous))
    default = Located(raw["default"], doc.loc(("layouts", "default"))) if "default" in raw else None
    return LayoutRules(default, tuple(functions))


def parse_implemented(doc: Document) -> Implemented | None:
    raw = doc.data.get("adaptor")
    if raw is None:
        return None
    where = ("adaptor", "implemented")
    return Implemented(doc.loc(where, key=True), tuple(
        Namespace(ns, doc.loc(where + (ns,), key=True),
                  tuple(Located(f, doc.loc(where + (ns, i))) for i, f in enumerate(functions)))
        for ns, functions in raw["implemented"].items()))


# ---------------------------------------------------------------- tests

def _freeze(value: Any) -> Any:
    return tuple(_freeze(v) for v in value) if isinstance(value, list) else value


# A number as YAML 1.2 and Python write it (1e-3, -.5, 0o17): YAML 1.1 reads some as text.
_NUMBER = re.compile(r"([-+]?)(?=\.?\d)(\d*)(\.\d*)?(?:[eE]([-+]?)(\d+))?|[-+]?0o[0-7]+")


def _text_number(value: Any) -> str | None:
    """How to write *value*, text that YAML 1.1 read where YAML 1.2 reads a number, as a number YAML 1.1 reads."""
    found = _NUMBER.fullmatch(value) if isinstance(value, str) else None
    if found is None or yaml.resolver.Resolver().resolve(yaml.ScalarNode, value, (True, False)) != "tag:yaml.org,2002:str":
        return None
    sign, whole, fraction, exponent_sign, exponent = found.groups()
    if "o" in value:
        return str(int(value, 8))
    return sign + (whole or "0") + (fraction or ".0") + (f"e{exponent_sign or '+'}{exponent}" if exponent else "")


def _check_skip_values(doc: Document, where: tuple, values: list, diags: Diagnostics) -> None:
    """A skip_params value spelled as a number that YAML 1.1 reads as text would never equal the
    numeric parameter it is meant for. The loader cannot tell a quoted "1e-3" from a plain one,
    and no diopi_test parameter is such text, so it is refused either way."""
    for i, value in enumerate(values):
        if isinstance(value, list):
            _check_skip_values(doc, where + (i,), value, diags)
        elif (number := _text_number(value)) is not None and math.isinf(float(number)):
            diags.add(doc.loc(where + (i,)), where + (i,),
                      f"{value} is beyond the largest float, and YAML 1.1 reads it as text, which never equals a "
                      "numeric parameter: write .inf if infinity is meant")
        elif number is not None:
            diags.add(doc.loc(where + (i,)), where + (i,),
                      f"YAML 1.1 reads {value} as text, not a number, and text never equals a numeric parameter: "
                      f"write {number} (such text is refused here, quoted or not)")
        elif isinstance(value, float) and math.isnan(value):
            diags.add(doc.loc(where + (i,)), where + (i,),
                      "NaN equals no parameter, not even NaN, so it would skip nothing: leave it out")
        elif isinstance(value, float) and math.isinf(value) and "inf" not in doc.written.get(where + (i,), "inf").lower():
            diags.add(doc.loc(where + (i,)), where + (i,),
                      f"{doc.written[where + (i,)]} is beyond the largest float and reads as infinity: "
                      "write .inf if infinity is meant")


def _check_tolerance(doc: Document, where: tuple, value: Any, diags: Diagnostics) -> None:
    """The schema asks a tolerance for a number > 0, which .nan and .inf pass."""
    if isinstance(value, float) and not math.isfinite(value):
        diags.add(doc.loc(where), where, f"expected a tolerance (a finite number > 0), got "
                                         f"{doc.written.get(where, value)}: NaN and infinity are no tolerance")


def parse_tests(doc: Document, diags: Diagnostics) -> TestConfig:
    raw = doc.data.get("tests") or {}
    rules = []
    for key, body in sorted((raw.get("diopi") or {}).items()):
        where = ("tests", "diopi", key)
        skip_tensors = tuple(
            TensorSkip(tuple(item["tensors"]), tuple(item.get("dtypes") or ()),
                       tuple(tuple(s) for s in item.get("shapes") or ()), doc.loc(where + ("skip_tensors", i)))
            for i, item in enumerate(body.get("skip_tensors") or ()))
        dtype_items = [(("skip_dtypes", i), d) for i, d in enumerate(body.get("skip_dtypes") or ())]
        for n, item in enumerate(body.get("skip_tensors") or ()):
            dtype_items += [(("skip_tensors", n, "dtypes", i), d) for i, d in enumerate(item.get("dtypes") or ())]
        for t in TOLERANCES:
            _check_tolerance(doc, where + (t,), body.get(t), diags)
        for p, values in (body.get("skip_params") or {}).items():
            _check_skip_values(doc, where + ("skip_params", p), values, diags)
        rules.append(DiopiTestRule(
            key=key, loc=doc.loc(where, key=True), names=tuple(body.get("names") or (key,)),
            tolerances=tuple((t, body[t]) for t in TOLERANCES if t in body),
            skip_all=bool(body.get("skip_all", False)),
            skip_dtypes=tuple(body.get("skip_dtypes") or ()),
            skip_params=tuple((p, tuple(_freeze(v) for v in values))
                              for p, values in sorted((body.get("skip_params") or {}).items())),
            skip_tensors=skip_tensors, reason=body.get("reason", ""),
            dtype_items=tuple((sub, d, doc.loc(where + sub)) for sub, d in dtype_items),
            torch=torch_gate(doc, where, body, diags),
        ))
    pt = raw.get("pytorch") or {}
    disabled = []
    for cls, items in sorted((pt.get("disabled") or {}).items()):
        where = ("tests", "pytorch", "disabled", cls)
        # An item is a test name, or {test: NAME, torch: GATE, reason: ...}.
        tests = tuple(DisabledTest(Located(item, doc.loc(where + (i,))), None) if isinstance(item, str) else
                      DisabledTest(Located(item["test"], doc.loc(where + (i, "test"))),
                                   torch_gate(doc, where + (i,), item, diags))
                      for i, item in enumerate(items))
        disabled.append(DisabledClass(cls, doc.loc(where, key=True), tests))
    precision = []
    for name, value in sorted((pt.get("precision") or {}).items()):
        # A value is a tolerance, or {value: TOLERANCE, torch: GATE, reason: ...}.
        where = ("tests", "pytorch", "precision", name)
        _check_tolerance(doc, where + ("value",) if isinstance(value, dict) else where,
                         value.get("value") if isinstance(value, dict) else value, diags)
        if isinstance(value, dict):
            precision.append(Precision(name, value["value"],
                                       torch_gate(doc, ("tests", "pytorch", "precision", name), value, diags)))
        else:
            precision.append(Precision(name, value))
    return TestConfig(tuple(rules), tuple(disabled), tuple(precision))
