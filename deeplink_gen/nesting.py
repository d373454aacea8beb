"""How deeply a YAML or JSON text nests, measured on the text before any parser sees it.

PyYAML composes nodes recursively in C: a few tens of thousands of nested
`[` overflow the C stack (a segfault, no message), and libyaml slows down
quadratically with the depth of flow collections before it gets there. So the
depth is bounded here, by one linear pass over the characters that follows
libyaml's own rules for quotes, comments, block scalars, plain scalars and
indentation. The count is an upper bound: where the text is not valid YAML the
pass may count a level the parser would not reach, never the other way round
(a closing bracket counts only where libyaml would read one). JSON's rules are
a subset: brackets outside strings."""

from __future__ import annotations

import re
from dataclasses import dataclass

from deeplink_gen.errors import Diagnostic, Loc, UserError

MAX_DEPTH = 64          # no file deeplink-gen reads nests deeper than a dozen levels

_BREAK = re.compile(r"\r\n|[\r\n\x85\u2028\u2029]")     # every line break libyaml knows
_BLANK = " \t"
_FLOW = ",[]{}"
_PLAIN_END = re.compile(r"(?<=[ \t])#|:(?=[ \t]|$)")      # where a block plain scalar stops
_FLOW_SIGN = re.compile(r"[\[\]{},:?'\"!&*#]")             # what may mean something inside flow
_FLOW_ITEMS = {"[": re.compile(r"(?:[ \t]*[^\[\]{},:?'\"!&*# \t][^\[\]{},:?'\"!&*#]*,)*"),
               "{": re.compile(r"(?:[ \t]*[^\[\]{},:?'\"!&*# \t][^\[\]{},?'\"!&*#]*,)*"),
               "p": re.compile("")}
_NAME = re.compile(r"[0-9A-Za-z_-]*")                    # an anchor's or alias's name
_BLOCK_HEADER = re.compile(r"[|>]([1-9])?[+-]?([1-9])?")


@dataclass(frozen=True)
class TooDeep(Exception):
    """Where the text first nests deeper than the limit (1-based line and column)."""

    line: int
    column: int


def check_yaml(text: str, name: str, key: tuple | str = ()) -> None:
    """Raise UserError at the place where the YAML *text* (file *name*) first nests
    more than MAX_DEPTH levels deep."""
    try:
        _YamlDepth(MAX_DEPTH).scan(text)
    except TooDeep as deep:
        raise _too_deep(name, deep, key) from None


def check_json(text: str, name: str, key: tuple | str = ()) -> None:
    """The same for a JSON *text*."""
    depth, in_string, escaped, line, start = 0, False, False, 1, 0
    for m in re.finditer(r'[\[\]{}"\\\n]', text):
        c = m.group()
        if c == "\n":
            line, start = line + 1, m.end()
        elif in_string:
            if escaped or c == "\\":
                escaped = not escaped and c == "\\"
            elif c == '"':
                in_string = False
            continue
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise _too_deep(name, TooDeep(line, m.start() - start + 1), key)
        elif c in "]}":
            depth -= 1
        escaped = False


def _too_deep(name: str, deep: TooDeep, key: tuple | str) -> UserError:
    return UserError([Diagnostic(Loc(name, deep.line, deep.column), key,
                                 f"values are nested more than {MAX_DEPTH} levels deep")])


class _YamlDepth:
    """One pass over a YAML text. Block collections are kept as a stack of
    (column, is_sequence); flow collections as a count."""

    def __init__(self, limit: int):
        self.limit = limit
        self.stack: list[tuple[int, bool]] = []
        self.flows: list[str] = []      # open flow collections, "[" or "{", and "p" for a pair in a "["
        self.quote = ""                 # the quote character of a quoted scalar left open at a line end
        self.plain = None               # a block plain scalar continues on lines indented more than this
        self.block = None               # [parent indent, content indent or None] inside a block scalar
        self.flow_start = True          # inside flow: the next character may start a node
        self.flow_plain = False         # inside flow: within a plain scalar
        self.flow_col = 0               # the column of the flow collection opened in block context
        self.line = 0

    def scan(self, text: str) -> None:
        for self.line, line in enumerate(_BREAK.split(text), 1):
            self._line(line)

    def _deeper(self, col: int, extra: int = 0) -> None:
        # a flow collection may yet turn out to be the key of a block mapping around it
        if len(self.stack) + len(self.flows) + bool(self.flows) + extra > self.limit:
            raise TooDeep(self.line, col + 1)

    def _line(self, line: str) -> None:
        lead = len(line) - len(line.lstrip(" "))
        if self.block is not None and self._in_block_scalar(line, lead):
            return
        i = 0
        if self.quote:
            i = self._quoted(line, 0, self.quote)
            if self.quote:
                return
            if self.flows:
                self.flow_start = False
        if self.flows:
            i = self._flow(line, i)
            if self.flows:
                return
            self._block(line, i, self.flow_col, after_node=True)
            return
        if i:
            self._block(line, i, i, after_node=True)
            return
        rest = line[lead:]
        if not rest.strip(_BLANK):
            return
        if lead == 0 and (rest.startswith("---") or rest.startswith("...")) and rest[3:4] in ("", " ", "\t"):
            self.stack.clear()
            self.plain = None
            self._block(line, 3, 3, after_node=False)
            return
        if self.plain is not None and lead > self.plain and not rest.startswith("#"):
            m = _PLAIN_END.search(line, lead)
            if m is None:
                return
            self.plain = None
            if m.group().endswith("#"):
                return
            self._block(line, m.end(), m.end(), after_node=False)
            return
        self.plain = None
        while self.stack and self.stack[-1][0] > lead:
            self.stack.pop()
        self._block(line, lead, lead, after_node=False)

    def _in_block_scalar(self, line: str, lead: int) -> bool:
        """Whether *line* is text of the block scalar (| or >) being read."""
        parent, indent = self.block
        if lead == len(line):
            return True
        if indent is None:
            indent = max(lead, parent + 1, 1)
            self.block[1] = indent
        if lead >= indent:
            return True
        self.block = None
        return False

    def _push(self, col: int, sequence: bool) -> None:
        top = self.stack[-1] if self.stack else None
        if top is not None and top[0] == col:
            if top[1] == sequence:
                return
            if not sequence:        # a key ends an indentless sequence under a mapping at its column
                self.stack.pop()
                if self.stack and self.stack[-1] == (col, False):
                    return
        elif top is not None and top[0] > col:
            return
        self.stack.append((col, sequence))
        self._deeper(col)

    def _block(self, line: str, i: int, node: int, *, after_node: bool) -> None:
        """Read *line* from *i* in block context; *node* is the column where the
        current node (properties included) starts; *after_node*: a node ends at *i*."""
        n = len(line)
        while True:
            while i < n and line[i] in _BLANK:
                i += 1
            if i >= n or (line[i] == "#" and (i == 0 or line[i - 1] in _BLANK)):
                return
            c, nxt = line[i], line[i + 1:i + 2]
            if after_node:
                if c != ":":            # a syntax error, but libyaml may still take the node for a key
                    m = _PLAIN_END.search(line, i)
                    if m is None or m.group().endswith("#"):
                        return
                    i = m.start()
                self._push(node, False)     # after a quoted, flow or alias node no blank need follow ':'
                i, node, after_node = i + 1, i + 1, False
                continue
            if c in "-?:" and nxt in ("", " ", "\t"):
                self._push(node if c == ":" else i, c == "-")
                i += 1
                while i < n and line[i] in _BLANK:
                    i += 1
                node = i
                continue
            if c == "!":
                while i < n and line[i] not in _BLANK:
                    i += 1
                continue
            if c == "&":
                i = _NAME.match(line, i + 1).end()
                continue
            if c in "|>":
                m = _BLOCK_HEADER.match(line, i)
                digit = m.group(1) or m.group(2)
                parent = self.stack[-1][0] if self.stack else -1
                self.block = [parent, (parent + int(digit) if parent >= 0 else int(digit)) if digit else None]
                return
            if c in "[{":
                self.flow_col, self.flows, self.flow_start, self.flow_plain = node, [c], True, False
                self._deeper(i)
                i = self._flow(line, i + 1)
                if self.flows:
                    return
                after_node = True
                continue
            if c in "'\"":
                i = self._quoted(line, i + 1, c)
                if self.quote:
                    return
                after_node = True
                continue
            if c == "*":
                i, after_node = _NAME.match(line, i + 1).end(), True
                continue
            m = _PLAIN_END.search(line, i)
            if m is None:
                self.plain = self.stack[-1][0] if self.stack else -1
                return
            if m.group().endswith("#"):
                return
            i, after_node = m.start(), True

    def _quoted(self, line: str, i: int, quote: str) -> int:
        """Skip a quoted scalar's text from *i*; the index after its closing quote,
        or len(line) with self.quote set while it goes on past the line."""
        n = len(line)
        while i < n:
            c = line[i]
            if quote == '"' and c == "\\":
                i += 2
                continue
            if c == quote:
                if quote == "'" and line[i + 1:i + 2] == "'":
                    i += 2
                    continue
                self.quote = ""
                return i + 1
            i += 1
        self.quote = quote
        return n

    def _pair(self, col: int) -> None:
        """A key or value inside a flow sequence is a single-pair mapping of its own."""
        if self.flows[-1] == "[":
            self.flows.append("p")
            self._deeper(col)

    def _flow(self, line: str, i: int) -> int:
        """Read *line* from *i* inside flow collections; the index after the one
        that closes the outermost, or len(line)."""
        n = len(line)
        while True:
            if self.flow_start and (run := _FLOW_ITEMS[self.flows[-1]].match(line, i)).end() > i:
                i = run.end()   # items with nothing in them that nests, quotes or comments: a fast path
            if (m := _FLOW_SIGN.search(line, i)) is None:
                break
            j, c = m.start(), m.group()
            if line[i:j].strip(_BLANK):         # plain text before it
                self.flow_start, self.flow_plain = False, True
            i = j + 1
            after = line[i:i + 1]
            if c == "#":
                if j == 0 or line[j - 1] in _BLANK:
                    return n
                self.flow_start, self.flow_plain = False, True
            elif c in "[{":
                self.flows.append(c)
                self._deeper(j)
                self.flow_start, self.flow_plain = True, False
            elif c in "]},":
                if self.flows[-1] == "p":
                    self.flows.pop()
                if c != ",":
                    self.flows.pop()
                self.flow_start, self.flow_plain = c == ",", False
                if not self.flows:
                    return i
            elif c == ":" and (not self.flow_plain or after in ("", " ", "\t") or after in _FLOW):
                self._pair(j)
                self.flow_start, self.flow_plain = True, False
            elif self.flow_plain:
                pass
            elif c in "'\"" and self.flow_start:
                i = self._quoted(line, i, c)
                self.flow_start = False
                if self.quote:
                    return n
            elif c == "?" and after in ("", " ", "\t"):
                self._pair(j)
                self.flow_start = True
            elif c == "!":      # a tag may hold brackets: a closing one there does not count
                while i < n and line[i] not in _BLANK and line[i] not in "[{,":
                    i += 1
                self.flow_start = True
            elif c in "&*":
                i = _NAME.match(line, i).end()
                self.flow_start = c == "&"
            else:
                self.flow_start, self.flow_plain = False, True
        if line[i:].strip(_BLANK):
            self.flow_start, self.flow_plain = False, True
        return n
