"""Reading DIPU's op config and DIOPI's convert_config.yaml as upstream reads
them (YAML 1.1), keeping the line of every entry and key."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from deeplink_gen import inputfile
from deeplink_gen.errors import Diagnostic, Loc, UserError


def warning(file: str, line: int, message: str) -> Diagnostic:
    """Something about the upstream input: file:line: warning: message."""
    return Diagnostic(Loc(file, line, 1), None, message, "warning")


@dataclass
class Upstream:
    index: int
    line: int
    data: dict
    key_lines: dict                                     # key -> the line of each occurrence
    text_lines: dict = field(default_factory=dict)      # key -> the line of its value's first line of text

    def line_in(self, key: str, offset: int) -> int:
        """The line of character *offset* of the string value of *key*: a block scalar
        (`|`) keeps its lines; any other scalar is placed at its first line."""
        first, block = self.text_lines.get(key, (self.key_lines.get(key, [self.line])[-1], False))
        return first + (self.data[key][:offset].count("\n") if block else 0)


def _text(path: Path, option: str) -> str:
    """The UTF-8 text of the file *path* given with *option* (inputfile.read's rules)."""
    raw = inputfile.read(path, key=option)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError([Diagnostic(Loc.at(str(path), raw, exc.start), option,
                                    f"not valid UTF-8 (byte 0x{raw[exc.start]:02x})")]) from None


def read_functions(path: Path) -> list[Upstream]:
    text = _text(path, "--functions")
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.load(text, Loader=yaml.SafeLoader)  # YAML 1.1, as upstream's FullLoader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise UserError([Diagnostic(Loc(str(path), mark.line + 1, mark.column + 1) if mark else Loc(str(path), 1, 1),
                                    "(top level)", f"YAML syntax error: {exc.problem}")]) from None
    except RecursionError:
        raise UserError([Diagnostic(Loc(str(path), 1, 1), "(top level)", "values are nested too deeply")]) from None
    if not isinstance(root, yaml.SequenceNode) or not isinstance(data, list):
        raise UserError([Diagnostic(Loc(str(path), 1, 1), "(top level)",
                                    "expected a YAML list of op entries (DIPU's diopi_functions.yaml)")])
    out = []
    for i, (node, item) in enumerate(zip(root.value, data)):
        key_lines: dict = {}
        text_lines: dict = {}
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                key_lines.setdefault(k.value, []).append(k.start_mark.line + 1)
                if isinstance(v, yaml.ScalarNode):      # the last occurrence wins, as the value does
                    block = v.style == "|"
                    text_lines[k.value] = (v.start_mark.line + (2 if block else 1), block)
        out.append(Upstream(i, node.start_mark.line + 1, item, key_lines, text_lines))
    return out


def read_convert_config(path: Path) -> tuple[str | None, dict[str, str], list[Diagnostic]]:
    """(common layout, {diopiFn: layout}, warnings): only what DIPU reads."""
    notes: list[Diagnostic] = []
    text = _text(path, "--convert-config")
    try:
        data = yaml.safe_load(text)
    except RecursionError:
        raise UserError([Diagnostic(Loc(str(path), 1, 1), "--convert-config", "values are nested too deeply")]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        loc = Loc(str(path), mark.line + 1, mark.column + 1) if mark else Loc(str(path), 1, 1)
        raise UserError([Diagnostic(loc, "--convert-config", f"YAML syntax error: {exc.problem}")]) from None
    except yaml.YAMLError as exc:
        raise UserError([Diagnostic(Loc(str(path), 1, 1), "--convert-config", f"YAML error: {exc}")]) from None
    common, per_fn = None, {}
    for item in data or []:
        if not isinstance(item, dict) or len(item) != 1:
            continue
        (name, cfg), = item.items()
        if not isinstance(cfg, dict) or "layout" not in cfg:
            continue
        layout = cfg["layout"]
        if not isinstance(layout, str):
            notes.append(warning(str(path), 0, f"{name}: layout is not a string; DIPU cannot read it (ignored)"))
            continue
        if name == "common_config":
            common = layout
        else:
            per_fn[name] = layout  # duplicate entries: the last one wins, as in DIOPI
    return common, per_fn, notes
