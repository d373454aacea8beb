"""Reading DIPU's op config and DIOPI's convert_config.yaml as upstream reads
them (YAML 1.1), keeping the line of every entry and key."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from deeplink_gen import inputfile, nesting
from deeplink_gen.cpptext import refuse_bidi
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
    """The UTF-8 text of the file *path* given with *option* (inputfile.read's rules), without the
    bidirectional control characters the workspace refuses."""
    text = inputfile.decode(inputfile.read(path, key=option), str(path), option)
    refuse_bidi(text, str(path), option)     # it would be carried into the workspace's C++
    return text


@dataclass(frozen=True)
class UpstreamYaml:
    """An upstream YAML file, read once: its nodes (for the line of each entry and key), its data,
    and the line of each item of a top-level list (an alias's own, not its anchor's)."""

    path: Path
    root: yaml.Node | None
    data: Any
    item_lines: tuple[int, ...] = ()


# libyaml where PyYAML has it, as for the workspace's own files: the pure-Python scanner
# takes a minute over a file of some MB.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _item_lines(text: str) -> tuple[int, ...]:
    """The line where each item of the top-level list of *text* begins: an alias item's own
    line, not its anchor's (the composed node of an alias is its anchor's)."""
    lines, level = [], 0
    for event in yaml.parse(text, Loader=_Loader):
        if level == 1 and isinstance(event, yaml.NodeEvent):
            lines.append(event.start_mark.line + 1)
        if isinstance(event, yaml.CollectionStartEvent):
            level += 1
        elif isinstance(event, yaml.CollectionEndEvent):
            level -= 1
    return tuple(lines)


def read_yaml(path: Path, option: str, key: str) -> UpstreamYaml:
    """The upstream YAML file *path* given with *option*, read by inputfile.read's
    rules as YAML 1.1 (as upstream's loaders read it). Every problem is a
    UserError under *key*, at its line, else at line 1."""
    text = _text(path, option)
    nesting.check_yaml(text, str(path), key)

    def fail(line: int, column: int, message: str) -> UserError:
        return UserError([Diagnostic(Loc(str(path), line, column), key, message)])

    loader = None
    try:
        yaml.reader.Reader(text)               # a character YAML forbids, at its character's place
        loader = _Loader(text)
        root = loader.get_single_node()        # composed once, and built from its nodes
        data = loader.construct_document(root) if root is not None else None
        return UpstreamYaml(path, root, data, _item_lines(text) if isinstance(root, yaml.SequenceNode) else ())
    except yaml.reader.ReaderError as exc:
        raise UserError([Diagnostic(Loc.at(str(path), text, exc.position), key,
                                    f"YAML error: {exc.reason}")]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        raise (fail(mark.line + 1, mark.column + 1, f"YAML syntax error: {exc.problem}") if mark
               else fail(1, 1, f"YAML syntax error: {exc.problem}")) from None
    except yaml.YAMLError as exc:
        raise fail(1, 1, f"YAML error: {exc}") from None
    except (ValueError, KeyError, TypeError, OverflowError):     # a tag its text does not fit: !!int "abc"
        node = _unconstructible(yaml.compose(text, Loader=_Loader))
        mark = node.start_mark if node is not None else None
        raise fail(mark.line + 1 if mark else 1, mark.column + 1 if mark else 1,
                   f"'{node.value[:40]}' is not a valid {node.tag.rsplit(':', 1)[-1]}" if node is not None
                   else "a value cannot be read") from None
    finally:
        if loader is not None:
            loader.dispose()


def _unconstructible(root: yaml.Node | None) -> yaml.ScalarNode | None:
    """The first scalar under *root* whose tag its text does not fit (each node once: aliases
    share nodes)."""
    constructor, seen, stack = yaml.SafeLoader(""), set(), [root] if root is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            try:
                constructor.construct_object(node, deep=True)
            except (ValueError, KeyError, TypeError, OverflowError, yaml.YAMLError):
                return node
        else:
            stack.extend(reversed([n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode)
                                  else node.value))
    return None


def read_functions(path: Path) -> list[Upstream]:
    found = read_yaml(path, "--functions", "(top level)")
    root, data = found.root, found.data
    if not isinstance(root, yaml.SequenceNode) or not isinstance(data, list):
        raise UserError([Diagnostic(Loc(str(path), 1, 1), "(top level)",
                                    "expected a YAML list of op entries (DIPU's diopi_functions.yaml)")])
    out = []
    for i, (node, item) in enumerate(zip(root.value, data)):
        key_lines: dict = {}
        text_lines: dict = {}
        if isinstance(node, yaml.MappingNode):
            # A merge (<<: *base) put the anchored mapping's pairs first, where they were written
            # before this entry: a key of the entry's own replaces one of them, and is no duplicate.
            # Of several merged mappings (<<: [*a, *b]) the one that wins gives the key's line.
            own = {k.value for k, _ in node.value if k.start_mark.index >= node.start_mark.index}
            for k, v in node.value:
                merged = k.start_mark.index < node.start_mark.index
                if merged and k.value in own:
                    continue
                if merged:
                    key_lines[k.value] = [k.start_mark.line + 1]
                else:
                    key_lines.setdefault(k.value, []).append(k.start_mark.line + 1)
                if isinstance(v, yaml.ScalarNode):      # the last occurrence wins, as the value does
                    block = v.style == "|"
                    text_lines[k.value] = (v.start_mark.line + (2 if block else 1), block)
        out.append(Upstream(i, found.item_lines[i], item, key_lines, text_lines))
    return out


def read_convert_config(config: UpstreamYaml) -> tuple[str | None, dict[str, str], list[Diagnostic]]:
    """(common layout, {diopiFn: layout}, warnings) of a convert_config.yaml: only what DIPU reads."""
    notes: list[Diagnostic] = []
    path = config.path
    common, per_fn = None, {}
    for item in config.data if isinstance(config.data, list) else []:
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
