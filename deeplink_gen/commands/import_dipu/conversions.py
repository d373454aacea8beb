"""DIOPI's impl/<vendor>/convert_config.yaml, read as DIOPI's adaptor
generator reads it (adaptor/codegen/gen.py at 02f03c6a, analysis_configs and
deal_dtype), into a vendor file's dtypes: and layouts: sections that mean the
same.

DIOPI's levels replace each other (a function's dtype rules replace the
common ones, a tensor's replace the function's); deeplink-gen's merge per
source dtype. So a level that drops a lower level's rule for a dtype gets a
rule keeping that dtype (``int64: int64``). What the generator reads but
never applies (contiguous, supportComposite) and what it skips (unknown
keys, rules without parentheses, an entry that a later one of the same
function replaces) is reported as a warning with the file's line."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from deeplink_gen.commands.import_dipu.read import UpstreamYaml, warning
from deeplink_gen.errors import Diagnostic, Loc, UserError, excerpt
from deeplink_gen.interfaces.diopi import CONVERSION_PRIMITIVES
from deeplink_gen.model import Prototypes
from deeplink_gen.model.dtypes import CONVERT_CONFIG_DTYPES, DTYPES
from deeplink_gen.model.layouts import LAYOUTS

_RULE = re.compile(r"\(([^()]*)\)->([A-Za-z0-9_]*)")
_TENSOR_LAYOUT = re.compile(r"^(\w+)\((\w+)\)$")
COMMON = "common_config"
FUNCTION_KEYS = ("dtype", "tensor_dtype", "layout", "contiguous", "supportComposite")
COMMON_KEYS = ("dtype", "layout", "contiguous")


def _shown(value) -> str:
    """A value that is not the string expected, as a message quotes it."""
    return "nothing" if value is None else excerpt(repr(value))


@dataclass
class Conversions:
    """What one convert_config.yaml says, as deeplink-gen's vendor sections."""

    dtypes: dict = field(default_factory=dict)
    layouts: dict = field(default_factory=dict)
    notes: list[Diagnostic] = field(default_factory=list)


class _Reader:
    def __init__(self, path: Path):
        self.path = str(path)
        self.notes: list[Diagnostic] = []

    def fail(self, line: int, key: str, message: str) -> UserError:
        return UserError([Diagnostic(Loc(self.path, line, 1), key, message)])

    def warn(self, line: int, message: str) -> None:
        self.notes.append(warning(self.path, line, message))

    def rules(self, text, line: int, where: str) -> dict[str, str]:
        """deal_dtype: `(a, b)->c, (d)->e`, spaces ignored, case-insensitive."""
        if not isinstance(text, str):
            raise self.fail(line, where, "expected rules such as '(int64)->int32, (float64)->float32', "
                                         f"got {_shown(text)}")
        compact = text.replace(" ", "").lower()
        out: dict[str, str] = {}
        for m in _RULE.finditer(compact):
            for source in m.group(1).split(","):
                for dtype in (source, m.group(2)):
                    if dtype not in DTYPES:
                        raise self.fail(line, where, f"'{dtype}' is not a DIOPI dtype ({', '.join(DTYPES)})")
                    if dtype not in CONVERT_CONFIG_DTYPES:
                        self.warn(line, f"{where}: DIOPI's generator cannot read {dtype}; deeplink-gen's "
                                        "adaptor applies the rule")
                if source in out:
                    self.warn(line, f"{where}: ({source}) has a rule again; as DIOPI's generator does, the last "
                                    f"one is kept, ({source})->{m.group(2)}")
                out[source] = m.group(2)
        rest = _RULE.sub("", compact).replace(",", "")
        if rest:
            self.warn(line, f"{where}: '{rest}' is no (source, ...)->target rule; DIOPI's generator skips it")
        return self.one_step(out, line, where)

    def one_step(self, rules: dict[str, str], line: int, where: str) -> dict[str, str]:
        """*rules* without each one that chains with an earlier one (converts to the dtype that one
        converts, or the dtype that one converts to), with a warning: DIOPI converts each dtype once
        by its own rule, but deeplink-gen refuses a chain or a cycle of rules."""
        out: dict[str, str] = {}
        for source, target in rules.items():
            other = next(((s, t) for s, t in out.items() if source != target and s != t
                          and (t == source or s == target)), None)
            if other is None:
                out[source] = target
                continue
            kind = "a cycle" if other == (target, source) else "a chain"
            self.warn(line, f"{where}: ({other[0]})->{other[1]} and ({source})->{target} form {kind}, which "
                            "deeplink-gen refuses (each conversion ends at a dtype no rule converts): "
                            f"({source})->{target} skipped")
        return out

    def layout_tokens(self, text, line: int, where: str) -> tuple[list[str], dict[str, str]]:
        """A function's layout string: accepted layouts, and tensor(LAYOUT) items."""
        if not isinstance(text, str):
            raise self.fail(line, where, f"expected a string of layouts such as 'NHWC,NCHW', got {_shown(text)}")
        tokens, tensors = [], {}
        for token in text.replace(" ", "").split(","):
            if not token:
                continue
            m = _TENSOR_LAYOUT.match(token)
            if token in LAYOUTS:
                if token in tokens:
                    self.warn(line, f"{where}: {token} is listed twice")
                else:
                    tokens.append(token)
            elif m and m.group(2) in LAYOUTS:
                self.warn(line, f"{where}: the tensor layout '{token}' makes DIOPI's generator fail; "
                                "deeplink-gen's adaptor applies it")
                tensors[m.group(1)] = m.group(2)
            else:
                raise self.fail(line, where, f"'{token}' is not a layout ({', '.join(LAYOUTS)}) or tensor(LAYOUT)")
        return tokens, tensors


def _items(config: UpstreamYaml, r: _Reader) -> list[tuple[str, int, dict, dict[str, int]]]:
    """(name, line, body, key lines) of each entry, in file order; a key given twice in an
    entry is warned about with *r*."""
    path, root, data = config.path, config.root, config.data
    if data is None:
        return []
    if not isinstance(data, list):
        raise UserError([Diagnostic(Loc(str(path), 1, 1), "(top level)",
                                    "expected a YAML list of single-key entries (DIOPI's convert_config.yaml)")])
    out = []
    for node, item in zip(root.value, data):
        line = node.start_mark.line + 1
        if not isinstance(item, dict) or len(item) != 1:
            raise UserError([Diagnostic(Loc(str(path), line, 1), "(entry)",
                                        "expected one key: common_config or a DIOPI function")])
        (name, body), = item.items()
        (_key, value), = node.value
        if not isinstance(body, dict):
            raise UserError([Diagnostic(Loc(str(path), line, 1), str(name),
                                        "expected a mapping of dtype/tensor_dtype/layout settings")])
        lines: dict[str, int] = {}
        for k, _v in value.value:
            if k.value in lines:
                r.warn(k.start_mark.line + 1, f"{name}: duplicate key '{k.value}' (first at line {lines[k.value]}); "
                                              "as DIOPI's generator does, the last value is kept")
            lines[k.value] = k.start_mark.line + 1
        out.append((str(name), line, body, lines))
    return out


def _keep_dropped(rules: dict[str, str], lower: dict[str, str]) -> dict[str, str]:
    """*rules*, which replace *lower* in DIOPI, as rules merged over *lower*."""
    out = {s: t for s, t in rules.items() if s != t or s in lower}
    out.update({s: s for s in lower if s not in rules})
    return {s: out[s] for s in sorted(out, key=DTYPES.index)}


def read_conversions(config: UpstreamYaml, protos: Prototypes) -> Conversions:
    r = _Reader(config.path)
    entries: dict[str, tuple[int, dict, dict[str, int]]] = {}
    common: tuple[int, dict, dict[str, int]] | None = None
    for name, line, body, lines in _items(config, r):
        if name == COMMON:
            if common is not None:      # DIOPI's generator keeps what the later one does not set
                r.warn(line, f"{COMMON} is configured again (first at line {common[0]}); as in DIOPI's "
                             "generator, each setting it gives replaces the earlier one's")
                body, lines = {**common[1], **body}, {**common[2], **lines}
            common = (line, body, lines)
            continue
        if name in entries:
            r.warn(line, f"{name} is configured again (first at line {entries[name][0]}); as in DIOPI's "
                         "generator, this entry replaces that one")
        entries[name] = (line, body, lines)
    out = Conversions()
    common_rules: dict[str, str] = {}
    if common is not None:
        line, body, lines = common
        for key in sorted(set(body) - set(COMMON_KEYS)):
            r.warn(lines[key], f"{COMMON}: '{key}' is not read by DIOPI's generator (ignored)")
        if "contiguous" in body:
            r.warn(lines["contiguous"], f"{COMMON}: contiguous has no effect in DIOPI's generator (ignored)")
        if "dtype" in body:
            common_rules = r.rules(body["dtype"], lines["dtype"], f"{COMMON}.dtype")
            for s in [s for s, t in common_rules.items() if s == t]:
                r.warn(lines["dtype"], f"{COMMON}.dtype: ({s})->{s} converts nothing (ignored)")
                del common_rules[s]
        if "layout" in body:
            layout = body["layout"]
            if isinstance(layout, list) and len(layout) == 1:
                layout = layout[0]
            if not isinstance(layout, str) or layout not in LAYOUTS:
                raise r.fail(lines["layout"], f"{COMMON}.layout",
                             f"expected one layout ({', '.join(LAYOUTS)}), got {layout!r}; DIPU reads this "
                             "value as one string")
            out.layouts["default"] = layout
    functions_dtypes: dict[str, dict] = {}
    functions_layouts: dict[str, object] = {}
    for name, (line, body, lines) in sorted(entries.items()):
        proto = protos.get(name)
        if proto is None:
            raise r.fail(line, name, "not a DIOPI function; DIOPI's generator stops here (AssertionError)")
        for key in sorted(set(body) - set(FUNCTION_KEYS)):
            r.warn(lines[key], f"{name}: '{key}' is not read by DIOPI's generator (ignored)")
        for key in ("contiguous", "supportComposite"):
            if key in body:
                r.warn(lines[key], f"{name}: {key} has no effect in DIOPI's generator's adaptor (ignored)")
        if name in CONVERSION_PRIMITIVES:
            r.warn(line, f"{name} is a conversion primitive; DIOPI's generator forwards it unconverted (ignored)")
            continue
        if proto.allocates:
            raise r.fail(line, name, "fills in tensor handles; DIOPI's generator fails on a setting for it")
        entry: dict = {}
        function_rules = common_rules
        if "dtype" in body:
            function_rules = r.rules(body["dtype"], lines["dtype"], f"{name}.dtype")
            kept = _keep_dropped(function_rules, common_rules)
            if kept:
                entry["convert"] = kept
        tensors: dict[str, dict] = {}
        raw_tensors = body.get("tensor_dtype") or {}
        if not isinstance(raw_tensors, dict):
            raise r.fail(lines["tensor_dtype"], f"{name}.tensor_dtype", "expected a mapping of tensor: rules")
        for tensor, text in raw_tensors.items():
            if tensor not in proto.tensor_names():
                raise r.fail(lines["tensor_dtype"], f"{name}.tensor_dtype",
                             f"'{tensor}' is not a tensor argument of {name} ({', '.join(proto.tensor_names())})")
            kept = _keep_dropped(r.rules(text, lines["tensor_dtype"], f"{name}.tensor_dtype.{tensor}"),
                                 function_rules)
            if kept:
                tensors[str(tensor)] = kept
        if tensors:
            entry["tensors"] = tensors
        if entry:
            functions_dtypes[name] = entry
        if "layout" in body:
            tokens, tensor_layouts = r.layout_tokens(body["layout"], lines["layout"], f"{name}.layout")
            if tensor_layouts:
                functions_layouts[name] = {**({"prefer": tokens} if tokens else {}),
                                           "tensors": {t: [v] for t, v in tensor_layouts.items()}}
            elif tokens:
                functions_layouts[name] = tokens
    rules = [common_rules, *(e.get("convert", {}) for e in functions_dtypes.values()),
             *(t for e in functions_dtypes.values() for t in e.get("tensors", {}).values())]
    if any(rules):
        targets = {t for level in rules for s, t in level.items() if s != t}
        # The dtypes reaching the vendor's code: all but those the common rules convert away.
        out.dtypes["supported"] = [d for d in DTYPES if d not in common_rules or d in targets]
        if common_rules:
            out.dtypes["convert"] = common_rules
        if functions_dtypes:
            out.dtypes["functions"] = functions_dtypes
    if functions_layouts:
        out.layouts["functions"] = functions_layouts
    out.notes = r.notes
    return out
