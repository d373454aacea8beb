"""Load YAML with the C parser, keep every node's position, reject duplicate
keys, and read only ``true``/``false`` as booleans (YAML 1.1's ``no``/``on``
stay strings, so a schema can flag them)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from deeplink_gen import inputfile, nesting, yamlhint
from deeplink_gen.cpptext import BIDI, bidi_message, refuse_bidi

# An integer YAML 1.1 reads in octal for its leading zero (0777 is 511), as no reader expects.
_OCTAL = re.compile(r"[-+]?0[0-7_]+")
# The control characters a string may not hold, whatever it is: all but tab, LF and CR (YAML's
# own reader refuses them written as they are, not written as escapes such as "\e" or "\0").
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f]")
from deeplink_gen.errors import Diagnostic, Loc, UserError

try:
    from yaml.cyaml import CParser as _Parser
except ImportError:  # PyYAML built without libyaml
    from yaml.parser import Parser as _Parser  # type: ignore[assignment]
    from yaml.reader import Reader as _Reader
    from yaml.scanner import Scanner as _Scanner
    from yaml.composer import Composer as _Composer

    class _Parser(_Reader, _Scanner, _Parser, _Composer):  # type: ignore[no-redef]
        def __init__(self, stream):
            _Reader.__init__(self, stream)
            _Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)
            _Composer.__init__(self)


# Values in one file, each use of an anchor counted as a copy: 20 times the largest real file
# (DIPU's op file imported: 2,200), and few enough that the schema check of any file ends in seconds.
MAX_NODES = 50_000
MAX_ALIASES = 10_000        # uses of anchored values (*name)
MAX_ALIAS_BYTES = 4 << 20   # text of the anchored values, counted once per use
FLOW_TEXT = 200             # the longest {...}/[...] text kept to quote back in a message
MAX_DEPTH = nesting.MAX_DEPTH

Path_ = tuple  # a path into a document: keys and list indices
_SCALAR_TAGS = frozenset(f"tag:yaml.org,2002:{kind}" for kind in ("str", "int", "float", "bool", "null"))


class _StrictResolver(yaml.resolver.Resolver):
    pass


_StrictResolver.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_StrictResolver.add_implicit_resolver("tag:yaml.org,2002:bool", _BOOL, list("tTfF"))


class _Loader(_Parser, yaml.constructor.SafeConstructor, _StrictResolver):  # type: ignore[misc, valid-type]
    def __init__(self, stream):
        _Parser.__init__(self, stream)
        yaml.constructor.SafeConstructor.__init__(self)
        _StrictResolver.__init__(self)


@dataclass
class Document:
    """A loaded YAML file: plain data plus the position of every value and key."""

    path: str
    data: Any
    values: dict = field(default_factory=dict)  # path tuple -> (line, col) of the value
    keys: dict = field(default_factory=dict)  # path tuple -> (line, col) of the key
    blocks: set = field(default_factory=set)  # paths of block scalars (| or >): their text starts a line lower
    flows: dict = field(default_factory=dict)  # path tuple -> source text of a short {...} or [...] value
    rejected: set = field(default_factory=set)  # paths taken out because the schema rejected them
    written: dict = field(default_factory=dict)  # path tuple -> the text of a number as written (2.10, not 2.1)

    def loc(self, path: Path_ = (), *, key: bool = False) -> Loc:
        """Best position for *path*: the key (if asked) or value, else the nearest parent."""
        table = self.keys if key else self.values
        probe = tuple(path)
        while True:
            if probe in table:
                line, col = table[probe]
                return Loc(self.path, line, col)
            if probe in self.values:
                line, col = self.values[probe]
                return Loc(self.path, line, col)
            if not probe:
                return Loc(self.path, 1, 1)
            probe = probe[:-1]

    def text_loc(self, path: Path_) -> Loc:
        """Where the text of a string value starts (the line after `|` for a block scalar)."""
        loc = self.loc(path)
        if tuple(path) in self.blocks:
            return Loc(loc.file, loc.line + 1, 1)
        return loc


def _fail(path: str, line: int, col: int, where: Path_, message: str) -> UserError:
    return _at(Loc(path, line, col), message, where)


def _at(loc: Loc, message: str, where: Path_ = ()) -> UserError:
    return UserError([Diagnostic(loc, tuple(where), message)])


def load(path: str | Path, *, display: str | None = None) -> Document:
    """Read (inputfile.read's rules) and parse *path*; any problem raises UserError with file:line:col."""
    return loads(inputfile.read(path, shown=display), display or str(path))


def loads(raw: bytes | str, name: str) -> Document:
    text = inputfile.decode(raw, name) if isinstance(raw, bytes) else raw
    if text.startswith("\ufeff"):
        text = text[1:]
    refuse_bidi(text, name)
    nesting.check_yaml(text, name)      # before the parser, which recurses (in C) per level
    try:
        loader = _Loader(text)
    except yaml.reader.ReaderError as exc:
        raise _at(Loc.at(name, text, exc.position), f"YAML error: {exc.reason}") from None
    try:
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        context = exc.context_mark.line + 1 if exc.context_mark else None
        try:
            found = yamlhint.explain(text, problem, line, col, context)
        except (IndexError, ValueError):  # a best guess only: keep libyaml's words
            found = None
        if found is not None:
            line, col, problem = found
        raise _fail(name, line, col, (), f"YAML syntax error: {problem}") from None
    except yaml.reader.ReaderError as exc:
        raise _at(Loc.at(name, text, exc.position), f"YAML error: {exc.reason}") from None
    except yaml.YAMLError as exc:
        raise _fail(name, 1, 1, (), f"YAML error: {exc}") from None
    finally:
        loader.dispose()
    doc = Document(name, None)
    if node is None:
        return doc
    builder = _Builder(doc, loader, text)
    doc.data = builder.build(node, ())
    return doc


class _Builder:
    def __init__(self, doc: Document, loader: _Loader, text: str):
        self.doc = doc
        self.loader = loader
        self.text = text
        self.count = 0
        self.built: set[int] = set()    # the nodes built once: an alias shares its anchor's node
        self.aliases = self.alias_bytes = 0
        self.use: Path_ | None = None   # where the alias being expanded is used

    def _pos(self, node) -> tuple[int, int]:
        return node.start_mark.line + 1, node.start_mark.column + 1

    def build(self, node, where: Path_) -> Any:
        if id(node) not in self.built or self.use is not None:
            return self._build(node, where)
        self.use = where
        try:
            return self._build(node, where)
        finally:
            self.use = None

    def _build(self, node, where: Path_) -> Any:
        if len(where) > MAX_DEPTH:
            line, col = self._pos(node)
            raise _fail(self.doc.path, line, col, where[:3],
                        f"values are nested more than {MAX_DEPTH} levels deep")
        self.count += 1
        if self.count > MAX_NODES:
            line, col = self._pos(node)
            raise _fail(self.doc.path, line, col, where,
                        f"the file holds more than {MAX_NODES} values (counting each use of an anchor as a copy), "
                        "more than deeplink-gen reads from one file; a catalog can be split into several files")
        if id(node) in self.built:
            self._alias(node, where)
        self.built.add(id(node))
        self.doc.values.setdefault(where, self._pos(node))
        start, end = node.start_mark.index, node.end_mark.index
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.flow_style and end - start <= FLOW_TEXT:
            self.doc.flows[where] = self.text[start:end]
        if isinstance(node, yaml.MappingNode):
            self._plain_tag(node, where, "tag:yaml.org,2002:map")
            return self._mapping(node, where)
        if isinstance(node, yaml.SequenceNode):
            self._plain_tag(node, where, "tag:yaml.org,2002:seq")
            return [self.build(item, where + (i,)) for i, item in enumerate(node.value)]
        if node.style in ("|", ">"):
            self.doc.blocks.add(where)
        value = self._scalar(node, where)
        if type(value) in (int, float):
            self.doc.written[where] = node.value
            if ":" in node.value or _OCTAL.fullmatch(node.value):
                line, col = self._pos(node)
                raise _fail(self.doc.path, line, col, where, (
                    f"YAML 1.1 reads {node.value} as the number {value} ("
                    f"{'base 60' if ':' in node.value else 'octal'}): write {value} for that number, "
                    f"or quote it (\"{node.value}\") for the text"))
        if type(value) is bool and not _BOOL.match(node.value):      # !!bool "off", which YAML 1.1 reads
            line, col = self._pos(node)
            raise _fail(self.doc.path, line, col, where, (
                f"YAML 1.1 reads '{node.value}' as {str(value).lower()}: write {str(value).lower()}"))
        return value

    def _alias(self, node, where: Path_) -> None:
        """Count a use of an anchored value, every use of its text once more: refused past the limits
        at the key (or the list) that holds the alias, as the alias itself keeps no position."""
        self.aliases += 1
        self.alias_bytes += node.end_mark.index - node.start_mark.index
        if self.aliases <= MAX_ALIASES and self.alias_bytes <= MAX_ALIAS_BYTES:
            return
        use = self.use or where
        loc = self.doc.keys.get(use) or self.doc.values.get(use[:-1]) or (1, 1)
        what = (f"more than {MAX_ALIASES} times" if self.aliases > MAX_ALIASES
                else f"to more than {MAX_ALIAS_BYTES >> 20} MiB of text")
        raise _fail(self.doc.path, loc[0], loc[1], use, f"aliases (*name) expand anchored values {what}")

    def _plain_tag(self, node, where: Path_, plain: str) -> None:
        """A tag on a mapping or list would ask for an object built from it: refused, never ignored."""
        if node.tag != plain:
            line, col = self._pos(node)
            raise _fail(self.doc.path, line, col, where, f"unsupported YAML tag '{node.tag}'")

    def _mapping(self, node, where: Path_) -> dict:
        out: dict = {}
        seen: dict = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                line, col = self._pos(key_node)
                raise _fail(self.doc.path, line, col, where, "merge keys ('<<') are not supported")
            key = self._scalar(key_node, where) if isinstance(key_node, yaml.ScalarNode) else None
            line, col = self._pos(key_node)
            if not isinstance(key, str):
                raise _fail(self.doc.path, line, col, where,
                            "mapping keys must be plain strings")
            if key in seen:
                first = seen[key]
                raise _fail(self.doc.path, line, col, where + (key,),
                            f"duplicate key '{key}' (first defined at line {first[0]})")
            seen[key] = (line, col)
            self.doc.keys[where + (key,)] = (line, col)
            out[key] = self.build(value_node, where + (key,))
        return out

    def _scalar(self, node, where: Path_) -> Any:
        if node.tag == "tag:yaml.org,2002:timestamp":
            return node.value
        if node.tag not in _SCALAR_TAGS:     # !!binary, !!python/..., or !!map on a scalar
            line, col = self._pos(node)
            raise _fail(self.doc.path, line, col, where, f"unsupported YAML tag '{node.tag}'")
        try:
            value = self.loader.construct_object(node, deep=True)
        except yaml.MarkedYAMLError as exc:     # its own text would name the parser's "<unicode string>"
            line, col = self._pos(node)
            raise _fail(self.doc.path, line, col, where, f"invalid value: {exc.problem or exc.context}") from None
        except (ValueError, KeyError, TypeError, OverflowError):   # a tag its text does not fit: !!int "abc"
            line, col = self._pos(node)
            raise _fail(self.doc.path, line, col, where,
                        f"'{node.value[:40]}' is not a valid {node.tag.rsplit(':', 1)[-1]}") from None
        found = BIDI.search(value) if isinstance(value, str) else None
        if found is not None:        # written as an escape ("\u202e"), which the file's text does not show
            line, col = self._pos(node)
            raise _fail(self.doc.path, line, col, where, bidi_message(found.group(), " (written as an escape)"))
        found = _CONTROL.search(value) if isinstance(value, str) else None
        if found is not None:        # "\e]0;...\a" retitles the terminal that shows a message quoting it
            line, col = self._pos(node)
            raise _fail(self.doc.path, line, col, where, (
                f"holds the control character U+{ord(found.group()):04X} (written as an escape), which no "
                "field takes; for an escape of C++ or Python, such as \\0, double its backslash in a quoted "
                "string, or write the text in a block (|)"))
        return value
