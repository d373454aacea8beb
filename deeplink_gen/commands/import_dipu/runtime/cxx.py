"""Reading a DIPU vendor's hand-written C++ as far as the import needs it:
its conditional branches resolved for one configuration, its top-level items
(includes, macros, declarations, function definitions) with their namespaces
and lines, and the calls a body makes. Not a C++ parser: the files it reads
are DIPU's runtime folders, whose top level is namespaces, declarations and
function definitions. Scanning runs on a masked copy of the text (comments
blanked, literal contents replaced), so braces and parentheses inside
comments and strings never count; slices are taken from the real text, so
what is carried keeps its comments byte for byte."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cached_property
from enum import Enum

from deeplink_gen.cpplex import condition_problem

_IDENT = re.compile(r"[A-Za-z_]\w*")
_CALL = re.compile(r"(?<![\w.>])((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)\s*\(")
# Words that take parentheses without being calls.
_NOT_CALLS = frozenset((
    "if", "for", "while", "switch", "return", "sizeof", "alignof", "decltype", "catch", "defined",
    "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "noexcept", "throw", "delete", "new",
    "typeid", "alignas", "static_assert", "do", "else",
))


def mask(text: str) -> str:
    """*text* with comments blanked (newlines kept) and the contents of string and
    character literals replaced by 'x': same length, same lines."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            # a line ending in a backslash continues the comment onto the next (translation phase 2)
            j = i
            while True:
                j = text.find("\n", j)
                if j < 0:
                    j = n
                    break
                k = j          # the line's last character but spaces and tabs, read back from its end
                while k > i and text[k - 1] in " \t":
                    k -= 1
                if text[k - 1] != "\\":
                    break
                j += 1
            out[i:j] = [ch if ch == "\n" else " " for ch in text[i:j]]
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out[i:j] = [ch if ch == "\n" else " " for ch in text[i:j]]
            i = j
        elif c == "'" and _in_number(text, i):
            i += 1              # a digit separator (1'000, 0xFF'FF), no character literal
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            # a backslash-newline inside a literal continues it: its newline stays, so lines keep their numbers
            out[i + 1:min(j, n)] = ["\n" if ch == "\n" else "x" for ch in text[i + 1:min(j, n)]]
            i = j + 1
        else:
            i += 1
    return "".join(out)


def _in_number(text: str, i: int) -> bool:
    """Whether the `'` at *i* is inside a preprocessing number (a digit separator): what runs
    before it of digits, letters, `_`, `.` and `'` starts with a digit or `.digit`."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_.'"):
        j -= 1
    token = text[j:i].lstrip(".")
    return bool(token) and token[0].isdigit() and (text[j] != "." or text[j + 1].isdigit())


def match_close(code: str, start: int) -> int:
    """The offset of the bracket closing the one at *start* in masked *code*; -1 when none."""
    pairs = {"(": ")", "{": "}", "[": "]", "<": ">"}
    opening, closing = code[start], pairs[code[start]]
    depth = 0
    for i in range(start, len(code)):
        if code[i] == opening:
            depth += 1
        elif code[i] == closing:
            depth -= 1
            if depth == 0:
                return i
    return -1


def split_top(code: str, sep: str = ",") -> list[tuple[int, int]]:
    """(start, end) of each part of masked *code* separated by *sep* outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(code):
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append((start, i))
            start = i + 1
    parts.append((start, len(code)))
    return [(s, e) for s, e in parts if code[s:e].strip()]


def calls(code: str) -> list[str]:
    """The names a masked piece of code calls, in order, leading `::` and
    namespaces dropped (`::cudaMalloc(` and `cudaMalloc(` are one call)."""
    found = []
    for m in _CALL.finditer(code):
        name = m.group(1).split("::")[-1]
        if name not in _NOT_CALLS:
            found.append(name)
    return found


# ---------------------------------------------------------------- conditionals

class _Unknown(Exception):
    pass


@dataclass(frozen=True)
class Branch:
    """A conditional the reading resolved without knowing its value."""

    line: int
    condition: str


class Config:
    """What the reading knows of a build configuration: the macros defined
    (name -> body), and the prefixes of macros the build alone defines (USE_*),
    which count as undefined unless defined here. Any other macro comes from an
    SDK header and its value is unknown."""

    def __init__(self, defined: dict[str, str] | None = None, build_prefixes: tuple[str, ...] = ("USE_",)):
        self.defined = dict(defined or {})
        self.build_prefixes = build_prefixes

    def known_undefined(self, name: str) -> bool:
        return name not in self.defined and name.startswith(self.build_prefixes)


_TOKEN = re.compile(r"\s*(\d+[uUlL]*|[A-Za-z_]\w*|&&|\|\||==|!=|>=|<=|[()!<>+\-*/%])")


class _Expr:
    """A preprocessor condition, evaluated in three values: a number, or
    _Unknown raised where an SDK macro decides it."""

    def __init__(self, text: str, config: Config, depth: int = 0):
        self.tokens = [m.group(1) for m in _TOKEN.finditer(text)]
        self.i = 0
        self.config = config
        self.depth = depth

    def value(self) -> int:
        v = self._or()
        if self.i != len(self.tokens):
            raise _Unknown
        return v

    def _peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _take(self):
        self.i += 1
        return self.tokens[self.i - 1]

    def _or(self):
        return self._chain("||", self._and, decides=True)

    def _and(self):
        return self._chain("&&", self._cmp, decides=False)

    def _chain(self, op: str, operand, decides: bool):
        """Operands joined by *op*, in three values: one operand whose truth is *decides*
        decides the whole chain, even beside an unknown one."""
        values = [self._try(operand)]
        while self._peek() == op:
            self._take()
            values.append(self._try(operand))
        if any(v is not None and bool(v) == decides for v in values):
            return int(decides)
        if any(v is None for v in values):
            raise _Unknown
        return int(not decides)

    def _try(self, rule):
        start = self.i
        try:
            return rule()
        except _Unknown:
            # skip to the end of this operand, at this nesting
            self.i = start
            depth = 0
            while self.i < len(self.tokens):
                t = self.tokens[self.i]
                if t == "(":
                    depth += 1
                elif t == ")":
                    if depth == 0:
                        break
                    depth -= 1
                elif depth == 0 and t in ("&&", "||"):
                    break
                self.i += 1
            return None

    def _cmp(self):
        left = self._sum()
        ops = {"==": int.__eq__, "!=": int.__ne__, ">=": int.__ge__, "<=": int.__le__, ">": int.__gt__,
               "<": int.__lt__}
        while self._peek() in ops:
            op = ops[self._take()]
            left = int(op(left, self._sum()))
        return left

    def _sum(self):
        left = self._unary()
        while self._peek() in ("+", "-", "*", "/", "%"):
            op = self._take()
            right = self._unary()
            left = {"+": left + right, "-": left - right, "*": left * right,
                    "/": left // right if right else 0, "%": left % right if right else 0}[op]
        return left

    def _unary(self):
        t = self._take() if self._peek() is not None else None
        if t is None:
            raise _Unknown
        if t == "!":
            return int(not self._unary())
        if t == "-":
            return -self._unary()
        if t == "(":
            v = self._or()
            if self._peek() != ")":
                raise _Unknown
            self._take()
            return v
        if t == "defined":
            paren = self._peek() == "("
            if paren:
                self._take()
            name = self._take()
            if paren:
                self._take()
            if name in self.config.defined:
                return 1
            if self.config.known_undefined(name):
                return 0
            raise _Unknown
        if t[0].isdigit():
            return int(t.rstrip("uUlL"))
        if t in self.config.defined:
            body = self.config.defined[t].strip()
            if self.depth > 8:
                raise _Unknown
            return _Expr(body or "1", self.config, self.depth + 1).value()
        if self.config.known_undefined(t):
            return 0
        raise _Unknown


def evaluate(condition: str, config: Config) -> bool | None:
    """The value of a #if condition; None where an SDK macro decides it."""
    try:
        return bool(_Expr(condition, config).value())
    except (_Unknown, IndexError, ValueError):
        return None


_DIRECTIVE = re.compile(r"^\s*#\s*(\w+)\s*(.*)$")


class Unreadable(Exception):
    """A conditional the preprocessor would refuse, at a 1-based line."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line


def resolve(text: str, code: str, config: Config) -> tuple[str, str, list[Branch]]:
    """*text* and its mask with every #if/#ifdef/#ifndef chain resolved for
    *config*: the lines of branches not taken, and the directives themselves,
    blanked (so lines keep their numbers). A condition an SDK macro decides
    takes the first such branch, as for the newest SDK, and is returned as a
    Branch for the caller to warn about. #define and #undef in taken code
    update *config*, so later conditions see them. Unreadable for a conditional the
    preprocessor would refuse (a condition it does not take, a group not closed or not opened)."""
    lines, masked = text.split("\n"), code.split("\n")
    # Each open chain: [active parent, a branch already taken, this branch active]
    stack: list[list[bool]] = []
    opened: list[int] = []           # the line of each open chain's #if
    undecided: list[Branch] = []
    active = True
    i = 0
    while i < len(lines):
        m = _DIRECTIVE.match(masked[i])
        end = i
        while end < len(lines) - 1 and masked[end].rstrip().endswith("\\"):
            end += 1
        if m and m.group(1) in ("if", "ifdef", "ifndef", "elif", "else", "endif"):
            word = m.group(1)
            cond = " ".join(x.rstrip("\\").strip() for x in [m.group(2)] + masked[i + 1:end + 1])
            if word in ("elif", "else", "endif") and not stack:
                raise Unreadable(i + 1, f"#{word} without an #if before it")
            if word not in ("else", "endif"):
                wrong = condition_problem(cond, word in ("if", "elif")) if cond.strip() else "is missing"
                if wrong is not None:
                    raise Unreadable(i + 1, f"the condition of #{word} {wrong}")
            if word in ("if", "ifdef", "ifndef"):
                if word == "ifdef":
                    cond = f"defined({cond.split()[0]})"
                elif word == "ifndef":
                    cond = f"!defined({cond.split()[0]})"
                value = evaluate(cond, config) if active else False
                take = active and value is not False
                if active and value is None:
                    undecided.append(Branch(i + 1, f"#{m.group(1)} {m.group(2).strip()}"))
                stack.append([active, take, take])
                opened.append(i + 1)
                active = take
            elif word == "elif":
                parent, done, _ = stack[-1]
                value = evaluate(cond, config) if parent and not done else False
                take = parent and not done and value is not False
                if parent and not done and value is None:
                    undecided.append(Branch(i + 1, f"#elif {m.group(2).strip()}"))
                stack[-1] = [parent, done or take, take]
                active = take
            elif word == "else":
                parent, done, _ = stack[-1]
                take = parent and not done
                stack[-1] = [parent, True, take]
                active = take
            else:
                active = stack.pop()[0]
                opened.pop()
            for k in range(i, end + 1):
                lines[k], masked[k] = "", ""
        elif not active:
            for k in range(i, end + 1):
                lines[k], masked[k] = "", ""
        elif m and m.group(1) == "define":
            body = " ".join([m.group(2)] + [x.strip() for x in masked[i + 1:end + 1]]).replace("\\", " ")
            name = _IDENT.match(body)
            if name and not body[name.end():].startswith("("):
                config.defined[name.group(0)] = body[name.end():].strip()
        elif m and m.group(1) == "undef":
            config.defined.pop(m.group(2).strip(), None)
        i = end + 1
    if stack:
        raise Unreadable(opened[-1], "this #if has no #endif")
    return "\n".join(lines), "\n".join(masked), undecided


# ---------------------------------------------------------------- top-level items

class ItemKind(Enum):
    INCLUDE = "include"
    DEFINE = "define"
    DIRECTIVE = "directive"      # any other preprocessor line (#pragma, ...)
    FUNCTION = "function"
    DECLARATION = "declaration"  # anything else ending in ';' (variables, tables, using, types)


@dataclass(frozen=True)
class Param:
    type: str
    name: str


@dataclass(frozen=True)
class Item:
    kind: ItemKind
    start: int                   # offsets into the file's text: [start, end)
    end: int
    line: int
    namespace: tuple[str, ...]
    name: str = ""               # a function's or macro's name; an include's header
    params: tuple[Param, ...] = ()
    returns: str = ""
    body: tuple[int, int] = (0, 0)   # a function body's offsets, braces excluded
    local: bool = False          # an include written with quotes
    macro_params: tuple[str, ...] | None = None


@dataclass(frozen=True, eq=False)     # one file is one object: hashing its whole text made long files quadratic
class SourceFile:
    path: str                    # as messages name it
    text: str                    # after resolving conditionals
    code: str                    # its mask
    items: tuple[Item, ...]
    branches: tuple[Branch, ...]

    @cached_property
    def _newlines(self) -> list[int]:
        return newlines(self.text)

    def line_of(self, offset: int) -> int:
        return bisect.bisect_left(self._newlines, offset) + 1

    def slice(self, item: Item) -> str:
        return self.text[item.start:item.end]

    def body(self, item: Item) -> str:
        return self.text[item.body[0]:item.body[1]]

    def body_code(self, item: Item) -> str:
        return self.code[item.body[0]:item.body[1]]

    def functions(self) -> list[Item]:
        return [i for i in self.items if i.kind is ItemKind.FUNCTION]


_QUALIFIERS = re.compile(r"\)\s*((?:const|noexcept|override|final|\s)*)$")
_INCLUDE = re.compile(r'#\s*include\s*([<"])([^>"]+)[>"]')
_DEFINE = re.compile(r"#\s*define\s+([A-Za-z_]\w*)(\(([^)]*)\))?")


def newlines(text: str) -> list[int]:
    """The offsets of *text*'s newlines: the line of an offset is found by bisection, where
    counting from the start of the text for each item made a long file quadratic."""
    return [m.start() for m in re.finditer("\n", text)]


def _params(text: str, code: str) -> tuple[Param, ...]:
    out = []
    for s, e in split_top(code):
        part = code[s:e].split("=")[0].rstrip()
        m = re.search(r"([A-Za-z_]\w*)\s*(\[[^\]]*\])?$", part)
        if m is None or part.strip() == "void":
            continue
        type_ = " ".join(text[s:s + m.start()].split())
        if not type_:                       # an unnamed parameter
            type_, name = " ".join(text[s:e].split()), ""
        else:
            name = m.group(1)
        out.append(Param(type_, name))
    return tuple(out)


def _namespaces(stack: list[str | None]) -> tuple[str, ...]:
    """The namespaces the open blocks of *stack* are in, a C++17 `namespace a::b {` counting as a and b."""
    return tuple(name for s in stack if s is not None for name in (s.split("::") if s else [s]))


def read(path: str, raw: str, config: Config) -> SourceFile:
    """The items of one file, its conditionals resolved for *config*."""
    text, code, branches = resolve(raw, mask(raw), config)
    breaks = newlines(text)
    items: list[Item] = []
    stack: list[str | None] = []      # open namespaces (None: extern "C" or another transparent block)
    i, n, start = 0, len(code), 0
    while i < n:
        c = code[i]
        if c == "#" and code[code.rfind("\n", 0, i) + 1:i].strip() == "":
            end = i
            while True:
                nl = code.find("\n", end)
                nl = n if nl < 0 else nl
                if code[end:nl].rstrip().endswith("\\"):
                    end = nl + 1
                    continue
                break
            line = code[i:nl]
            ns = _namespaces(stack)
            inc, define = _INCLUDE.match(text[i:nl]), _DEFINE.match(line)
            if inc:
                items.append(Item(ItemKind.INCLUDE, i, nl, bisect.bisect_left(breaks, i) + 1, ns, inc.group(2),
                                  local=inc.group(1) == '"'))
            elif define:
                mp = tuple(p.strip() for p in define.group(3).split(",")) if define.group(2) else None
                items.append(Item(ItemKind.DEFINE, i, nl, bisect.bisect_left(breaks, i) + 1, ns, define.group(1),
                                  macro_params=mp))
            else:
                items.append(Item(ItemKind.DIRECTIVE, i, nl, bisect.bisect_left(breaks, i) + 1, ns))
            i = start = nl
            continue
        if c == "}" :
            if stack:
                stack.pop()
            i = start = i + 1
            continue
        if c == ";":
            if code[start:i].strip():
                s = start + len(code[start:i]) - len(code[start:i].lstrip())
                items.append(Item(ItemKind.DECLARATION, s, i + 1, bisect.bisect_left(breaks, s) + 1,
                                  _namespaces(stack)))
            i = start = i + 1
            continue
        if c == "{":
            head = code[start:i]
            s = start + len(head) - len(head.lstrip())
            ns_match = re.fullmatch(r"\s*(?:inline\s+)?namespace\s*((?:[A-Za-z_]\w*\s*::\s*(?:inline\s+)?)*[A-Za-z_]\w*)?\s*",
                                    head)
            if ns_match:
                stack.append(re.sub(r"\s|\binline\b", "", ns_match.group(1) or ""))
                i = start = i + 1
                continue
            if re.fullmatch(r'\s*extern\s+"x"\s*', head):
                stack.append(None)
                i = start = i + 1
                continue
            close = match_close(code, i)
            close = n - 1 if close < 0 else close
            ns = _namespaces(stack)
            q = _QUALIFIERS.search(head.rstrip())
            if q and "=" not in head.split("(")[0]:
                paren_close = len(head.rstrip()) - len(q.group(0)) + start
                depth, j = 0, paren_close
                while j >= start:
                    if code[j] == ")":
                        depth += 1
                    elif code[j] == "(":
                        depth -= 1
                        if depth == 0:
                            break
                    j -= 1
                name_m = re.search(r"((?:[A-Za-z_]\w*::)*[A-Za-z_~]\w*)\s*$", code[start:j])
                if name_m:
                    qual = name_m.group(1)
                    name = qual.split("::")[-1]
                    returns = " ".join(text[s:start + name_m.start()].split())
                    items.append(Item(ItemKind.FUNCTION, s, close + 1, bisect.bisect_left(breaks, s) + 1, ns, name,
                                      _params(text[j + 1:paren_close], code[j + 1:paren_close]), returns,
                                      (i + 1, close)))
                    i = start = close + 1
                    continue
            # an initialiser or a type: the item runs to its ';'
            semi = code.find(";", close)
            semi = n - 1 if semi < 0 else semi
            items.append(Item(ItemKind.DECLARATION, s, semi + 1, bisect.bisect_left(breaks, s) + 1, ns))
            i = start = semi + 1
            continue
        i += 1
    return SourceFile(path, text, code, tuple(items), tuple(branches))
