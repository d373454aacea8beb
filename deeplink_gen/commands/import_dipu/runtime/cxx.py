"""Reading a DIPU vendor's hand-written C++ as far as the import needs it:
its conditional branches resolved for one configuration, its top-level items
(includes, macros, declarations, function definitions, macro uses) with the
blocks they sit in (namespaces, extern "C") and their lines, and the calls a
body makes. Not a C++ parser: the files it reads
are DIPU's runtime folders, whose top level is namespaces, declarations and
function definitions. Scanning runs on a masked copy of the text (comments
blanked, literal contents replaced), so braces and parentheses inside
comments and strings never count; slices are taken from the real text, so
what is carried keeps its comments byte for byte."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
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


# What the mask looks at: a comment, a literal's opening (a raw string with its prefix), a digraph.
_LEXEME = re.compile(r'//|/\*|(?<![\w])(?:u8|[uUL])?R"|["\']|<%|%>|<:|:>|%:')
_LINE_COMMENT = re.compile(r"//(?:[^\n]*\\[ \t]*\n)*[^\n]*")    # a backslash ending its line continues it
_QUOTED = {c: re.compile(rf"(?:[^{c}\\\n]|\\[\s\S])*") for c in "\"'"}
_RAW_DELIMITER = re.compile(r'[^\s()\\"]{0,16}\(')
# Each digraph as the punctuator it spells, padded to its length: an opening bracket last and a
# closing one first, so the text between a pair holds neither digraph.
_DIGRAPHS = {"<%": " {", "%>": "} ", "<:": " [", ":>": "] ", "%:": "# ", "%:%:": "##  "}
_NOT_SPACE = re.compile(r"[^\n]")


def mask(text: str) -> str:
    """*text* with comments blanked (newlines kept), the contents of string and character literals
    (raw strings too) replaced by 'x', and digraphs spelled as the punctuators they are (`<%` as ` {`):
    same length, same lines."""
    out: list[str] = []
    done = at = 0
    while (m := _LEXEME.search(text, at)) is not None:
        start, lexeme = m.start(), m.group()
        if lexeme == "//":
            end = _LINE_COMMENT.match(text, start).end()
            masked = _NOT_SPACE.sub(" ", text[start:end])
        elif lexeme == "/*":
            close = text.find("*/", start + 2)
            end = len(text) if close < 0 else close + 2
            masked = _NOT_SPACE.sub(" ", text[start:end])
        elif lexeme.endswith('R"') and (raw := _raw_end(text, m.end())) is not None:
            end, closed = raw
            masked = lexeme + _NOT_SPACE.sub("x", text[m.end():end - closed]) + '"' * closed
        elif lexeme in "\"'" or lexeme.endswith('"'):
            quote = m.end() - 1
            if lexeme == "'" and _in_number(text, start):
                at = start + 1          # a digit separator (1'000, 0xFF'FF), no character literal
                continue
            close = _QUOTED[text[quote]].match(text, quote + 1).end()
            # a backslash-newline inside a literal continues it: its newline stays, so lines keep their numbers
            end = min(close + 1, len(text))
            masked = text[start:quote + 1] + _NOT_SPACE.sub("x", text[quote + 1:close]) + text[close:end]
        elif lexeme == "<:" and text.startswith("::", start + 1) and text[start + 3:start + 4] not in (":", ">"):
            at = start + 1              # `<::` not followed by `:` or `>` is `<` then `::`
            continue
        else:
            lexeme = "%:%:" if text.startswith("%:%:", start) else lexeme
            end, masked = start + len(lexeme), _DIGRAPHS[lexeme]
        out += [text[done:start], masked]
        done = at = end
    out.append(text[done:])
    return "".join(out)


def _raw_end(text: str, body: int) -> tuple[int, bool] | None:
    """The end of the raw string whose delimiter starts at *body* (after `R"`), and whether it is
    closed (where not, it runs to the end); None where what follows is no raw string's delimiter."""
    delimiter = _RAW_DELIMITER.match(text, body)
    if delimiter is None:
        return None
    close = text.find(")" + delimiter.group()[:-1] + '"', delimiter.end())
    return (len(text), False) if close < 0 else (close + len(delimiter.group()) + 1, True)


def _in_number(text: str, i: int) -> bool:
    """Whether the `'` at *i* is inside a preprocessing number (a digit separator): what runs
    before it of digits, letters, `_`, `.` and `'` starts with a digit or `.digit`."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_.'"):
        j -= 1
    token = text[j:i].lstrip(".")
    return bool(token) and token[0].isdigit() and (text[j] != "." or text[j + 1].isdigit())


_PAIRS = {"(": (")", re.compile(r"[()]")), "{": ("}", re.compile(r"[{}]")), "[": ("]", re.compile(r"[\[\]]")),
          "<": (">", re.compile(r"[<>]"))}


def match_close(code: str, start: int) -> int:
    """The offset of the bracket closing the one at *start* in masked *code*; -1 when none."""
    opening, depth = code[start], 0
    closing, pattern = _PAIRS[opening]
    close = code.find(closing, start + 1)
    if close >= 0 and code.find(opening, start + 1, close) < 0:
        return close                    # nothing nested: as most are
    for m in pattern.finditer(code, start):
        if m.group() == opening:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return -1


_COMMA_OR_BRACKET = re.compile(r"[()\[\]{}<>,]")


def split_top(code: str) -> list[tuple[int, int]]:
    """(start, end) of each part of masked *code* separated by commas outside brackets."""
    parts, depth, start = [], 0, 0
    for m in _COMMA_OR_BRACKET.finditer(code):
        c = m.group()
        if c in "([{<":
            depth += 1
        elif c != ",":
            depth -= 1
        elif depth == 0:
            parts.append((start, m.start()))
            start = m.end()
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


def invocations(code: str) -> list[tuple[str, int, int]]:
    """The name and argument span (parentheses excluded) of each call or macro use in masked *code*."""
    found = []
    for m in _CALL.finditer(code):
        name = m.group(1).split("::")[-1]
        close = match_close(code, m.end() - 1)
        if name not in _NOT_CALLS and close > 0:
            found.append((name, m.end(), close))
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


def resolve(text: str, code: str, config: Config, included: Callable[[int, str, bool], None] | None = None
            ) -> tuple[str, str, list[Branch]]:
    """*text* and its mask with every #if/#ifdef/#ifndef chain resolved for
    *config*: the lines of branches not taken, and the directives themselves,
    blanked (so lines keep their numbers). A condition an SDK macro decides
    takes the first such branch, as for the newest SDK, and is returned as a
    Branch for the caller to warn about. #define and #undef in taken code
    update *config*, so later conditions see them; *included* is called with the
    line, header and quotedness of each #include in taken code, where it stands (a
    header it reads defines its macros there). Unreadable for a conditional the
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
        elif m and m.group(1) == "include" and included is not None \
                and (header := _INCLUDE.match(lines[i].lstrip())) is not None:
            included(i + 1, header.group(2), header.group(1) == '"')
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
    DECLARATION = "declaration"  # anything else ending in ';' or a brace (variables, tables, using, types)
    INVOCATION = "invocation"    # what stands at the top level with nothing to end it: only a macro's use can


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
    blocks: tuple[str, ...]      # the blocks it sits in, outermost first, as opened: `namespace dipu`, `extern "C"`
    name: str = ""               # a function's or macro's name; an include's header
    params: tuple[Param, ...] = ()
    returns: str = ""            # what a function's name follows: its return type and specifiers
    body: tuple[int, int] = (0, 0)   # a function body's offsets, braces excluded (a function-try-block's: from `try`)
    local: bool = False          # an include written with quotes
    macro_params: tuple[str, ...] | None = None
    qualifier: tuple[str, ...] = ()  # what a function's name is qualified with: dipu, devapis (and "" first for ::)
    suffix: str = ""             # what a function's parameter list is followed by (noexcept(false), const)

    @property
    def namespace(self) -> tuple[str, ...]:
        """The namespaces it sits in, "" for an anonymous one (an extern block is none)."""
        return tuple(b.removeprefix("inline ").removeprefix("namespace").strip() for b in self.blocks
                     if not b.startswith("extern"))

    @property
    def scope(self) -> tuple[str, ...]:
        """The namespace a function is a member of: where it sits, or what its qualified name says. The
        qualifier's first name is taken as the innermost enclosing namespace of that name, as lookup finds it."""
        if not self.qualifier:
            return self.namespace
        if self.qualifier[0] == "":
            return self.qualifier[1:]
        around = self.namespace
        at = max((k for k, n in enumerate(around) if n == self.qualifier[0]), default=len(around))
        return around[:at] + self.qualifier


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


_INCLUDE = re.compile(r'(?:#|%:)\s*include\s*([<"])([^>"]+)[>"]')
_DEFINE = re.compile(r"#\s*define\s+([A-Za-z_]\w*)(\(([^)]*)\))?")
# A block opened at the top level: a namespace (C++17 `a::inline b` too) or a linkage block; its
# literal is masked, `"x"` for "C".
_NAMESPACE_OPEN = re.compile(r"(?:\binline\s+)?\bnamespace\b(?:\s*(?:inline\s+)?[A-Za-z_]\w*"
                             r"(?:\s*::\s*(?:inline\s+)?[A-Za-z_]\w*)*)?\s*$")
_EXTERN_OPEN = re.compile(r'\bextern\s*"x*"\s*$')
# What may follow a function's parameter list: cv- and ref-qualifiers, exception specifications,
# virt-specifiers; `noexcept` and `throw` may take an argument list.
_SPECIFIER_END = re.compile(r"(?:\b(?:const|volatile|noexcept|override|final)|&&?)\s*$")
_SPECIFIER_CALL = re.compile(r"\b(?:noexcept|throw)\s*$")
# A name, qualified or not; a keyword before `::` ends a return type (`void ::dipu::f`), where any other
# name before `::` qualifies (`Foo ::f` is Foo::f).
_QUALIFIED_NAME_END = re.compile(
    r"((?<!\w)(?:::\s*)?(?:(?!(?:void|bool|char|short|int|long|signed|unsigned|float|double|auto|const|volatile|static|"
    r"inline|extern|constexpr)\b)[A-Za-z_]\w*(?:\s*<[^<>;{}()]*>)?\s*::\s*)*~?[A-Za-z_]\w*)\s*$")
_TRY = re.compile(r"\btry\s*$")
_HANDLER = re.compile(r"\s*catch\s*\(")
_OPEN_BRACE = re.compile(r"\s*\{")
_DECLARATION_END = re.compile(r"[;{}#]")
_READ_STOP = re.compile(r"[#{};(\[]")      # what the reader acts on


def newlines(text: str) -> list[int]:
    """The offsets of *text*'s newlines: the line of an offset is found by bisection, where
    counting from the start of the text for each item made a long file quadratic."""
    return [m.start() for m in re.finditer("\n", text)]


def splices(code: str) -> list[int]:
    """The offsets of the backslashes ending a line of masked *code* outside a directive (whose
    continuation lines are its own): there the compiler joins the next line to this one."""
    out, at, continued = [], 0, False
    for line in code.split("\n"):
        directive = continued or line.lstrip().startswith("#")
        kept = line.rstrip(" \t")
        joined = kept.endswith("\\")
        if joined and not directive:
            out.append(at + len(kept) - 1)
        continued = joined and directive
        at += len(line) + 1
    return out


_PARAM_NAME = re.compile(r"([A-Za-z_]\w*)\s*(\[[^\]]*\])?$")


def _params(text: str, code: str) -> tuple[Param, ...]:
    out = []
    for s, e in split_top(code):
        part = code[s:e].split("=")[0].rstrip()
        m = _PARAM_NAME.search(part)
        if m is None or part.strip() == "void":
            continue
        type_ = " ".join(text[s:s + m.start()].split())
        if not type_:                       # an unnamed parameter
            type_, name = " ".join(text[s:e].split()), ""
        else:
            name = m.group(1)
        out.append(Param(type_, name))
    return tuple(out)


_CODE_RUN = re.compile(r"\S+")


def uncommented(text: str, code: str) -> str:
    """*text* on one line, what its mask blanks (comments) left out."""
    if text == code:
        return " ".join(text.split())
    return " ".join(text[m.start():m.end()] for m in _CODE_RUN.finditer(code))


def _namespace_blocks(opened: str) -> tuple[str, ...]:
    """The blocks `namespace a::inline b`, `inline namespace a` or `namespace` opens, one per name."""
    words = re.findall(r"[A-Za-z_]\w*", opened)
    inline = words[0] == "inline"
    out = []
    for word in words[words.index("namespace") + 1:]:
        if word == "inline":
            inline = True
            continue
        out.append(("inline namespace " if inline else "namespace ") + word)
        inline = False
    return tuple(out) or ("inline namespace" if inline else "namespace",)


def _match_open(code: str, close: int, lo: int) -> int:
    """The offset of the `(` the `)` at *close* closes, searching back no further than *lo*; -1 when none."""
    depth = 0
    for j in range(close, lo - 1, -1):
        if code[j] == ")":
            depth += 1
        elif code[j] == "(":
            depth -= 1
            if depth == 0:
                return j
    return -1


_ARROW_OR_BRACKET = re.compile(r"->|[()\[\]{}]")


def _top_level_arrow(code: str, s: int, e: int) -> int | None:
    """The offset of the first `->` of code[s:e] outside brackets (a trailing return type's)."""
    if code.find("->", s, e) < 0:
        return None
    depth = 0
    for m in _ARROW_OR_BRACKET.finditer(code, s, e):
        c = m.group()
        if c == "->":
            if depth == 0:
                return m.start()
        elif c in "([{":
            depth += 1
        else:
            depth -= 1
    return None


@dataclass(frozen=True)
class _Declarator:
    """Where the parts of a function head are."""

    name_start: int              # of the name as written, qualified
    qualified: str
    params: tuple[int, int]      # inside the parentheses
    arrow: int | None            # a trailing return type's `->`


def _declarator(code: str, s: int, e: int) -> _Declarator | None:
    """The declarator of the function head code[s:e], read from its end: the parameter list is the
    last parenthesis that no specifier after it (noexcept(...), throw(...)) takes; None for no function head."""
    arrow = _top_level_arrow(code, s, e)
    j = e if arrow is None else arrow
    while True:
        k = len(code[s:j].rstrip()) + s
        if k <= s:
            return None
        if code[k - 1] == ")":
            open_ = _match_open(code, k - 1, s)
            if open_ < 0:
                return None
            word = _SPECIFIER_CALL.search(code, s, open_) if _ends_with_word(code, s, open_, _CALLED) else None
            if word is None:
                break
            j = word.start()
            continue
        word = _SPECIFIER_END.search(code, s, k)
        if word is None:
            return None
        j = word.start()
    if "=" in code[s:open_]:
        return None
    plain = _plain_name(code, s, open_)
    if plain is not None:
        return _Declarator(plain, code[plain:open_].rstrip(), (open_ + 1, k - 1), arrow)
    name = _QUALIFIED_NAME_END.search(code, s, open_)
    if name is None:
        return None
    return _Declarator(name.start(1), name.group(1), (open_ + 1, k - 1), arrow)


_CALLED = ("noexcept", "throw")
_PLAIN_NAME_END = re.compile(r"(?<![\w~])[A-Za-z_]\w*(?=\s*$)")


def _ends_with_word(code: str, s: int, e: int, words: tuple[str, ...]) -> bool:
    """Whether code[s:e] ends with one of *words*, spaces aside (a quick test before a regex's)."""
    return code[s:e].rstrip().endswith(words)


def _plain_name(code: str, s: int, e: int) -> int | None:
    """Where the name code[s:e] ends with starts, where it is a plain name, not qualified (after `::`) nor a
    destructor's (after `~`); None otherwise, and for no name."""
    name = _PLAIN_NAME_END.search(code, s, e)
    if name is None or code[s:name.start()].rstrip().endswith((":", "~")):
        return None
    return name.start()


def _handlers_end(code: str, at: int) -> int:
    """The end of the catch handlers of a function-try-block that start at *at*."""
    while (handler := _HANDLER.match(code, at)) is not None:
        close = match_close(code, handler.end() - 1)
        block = _OPEN_BRACE.match(code, close + 1) if close > 0 else None
        if block is None:
            return at
        at = match_close(code, block.end() - 1) + 1
        if at == 0:
            return len(code)
    return at


class _Reader:
    """One pass over a file's masked text, collecting its top-level items."""

    def __init__(self, text: str, code: str, blocks: tuple[str, ...]):
        self.text, self.code = text, code
        self.breaks = newlines(text)
        self.items: list[Item] = []
        self.open: list[tuple[str, ...]] = [(b,) for b in blocks]   # the blocks each open `{` opened
        self._blocks: tuple[list[tuple[str, ...]], tuple[str, ...]] = ([], ())
        self.outside = len(blocks)       # those opened before this file (by the namespace of its #include)
        self.start = 0                   # where the item being read starts

    def read(self) -> tuple[Item, ...]:
        code, i = self.code, 0
        while (m := _READ_STOP.search(code, i)) is not None:
            i, c = m.start(), m.group()
            if c == "#":
                i = self._directive(i) if code[code.rfind("\n", 0, i) + 1:i].strip() == "" else i + 1
            elif c == "}":
                self._flush(i)
                if len(self.open) > self.outside:
                    self.open.pop()
                i = self.start = i + 1
            elif c == ";":
                if code[self.start:i].strip():
                    self._add(ItemKind.DECLARATION, self._first(i), i + 1)
                i = self.start = i + 1
            elif c == "{":
                i = self.start = self._brace(i)
            elif c in "([":
                # what a parenthesis holds (a macro's arguments) ends nothing; one never closed holds the rest
                close = match_close(code, i)
                i = close + 1 if close > 0 else len(code)
        self._flush(len(code))
        return tuple(self.items)

    def _add(self, kind: ItemKind, start: int, end: int, **fields) -> None:
        self.items.append(Item(kind, start, end, bisect.bisect_left(self.breaks, start) + 1, self.blocks(), **fields))

    def blocks(self) -> tuple[str, ...]:
        """The blocks open where the reader stands, outermost first."""
        if self.open != self._blocks[0]:       # a block opened or closed since: most items share theirs
            self._blocks = (list(self.open), tuple(b for opened in self.open for b in opened))
        return self._blocks[1]

    def _first(self, end: int) -> int:
        """Where the item being read begins: its first character that is no space or comment."""
        part = self.code[self.start:end]
        return self.start + len(part) - len(part.lstrip())

    def _flush(self, end: int) -> None:
        """What runs from the last item to *end* with no `;` or block to end it, as an item of its own."""
        part = self.code[self.start:end]
        if part.strip():
            self._add(ItemKind.INVOCATION, self._first(end), self.start + len(part.rstrip()))
        self.start = end

    def _directive(self, i: int) -> int:
        self._flush(i)
        code, end = self.code, i
        while True:
            nl = code.find("\n", end)
            nl = len(code) if nl < 0 else nl
            if not code[end:nl].rstrip().endswith("\\"):
                break
            end = nl + 1
        inc, define = _INCLUDE.match(self.text[i:nl]), _DEFINE.match(code[i:nl])
        if inc:
            self._add(ItemKind.INCLUDE, i, nl, name=inc.group(2), local=inc.group(1) == '"')
        elif define:
            params = tuple(p.strip() for p in define.group(3).split(",")) if define.group(2) else None
            self._add(ItemKind.DEFINE, i, nl, name=define.group(1), macro_params=params)
        else:
            self._add(ItemKind.DIRECTIVE, i, nl)
        self.start = nl
        return nl

    def _brace(self, i: int) -> int:
        """Read what the `{` at *i* opens; the offset to go on from."""
        head = self.code[self.start:i]
        namespace = _NAMESPACE_OPEN.search(head) if "namespace" in head else None
        extern = _EXTERN_OPEN.search(head) if "extern" in head else None
        if namespace or extern:
            at = self.start + (namespace or extern).start()
            self._flush(at)
            self.open.append(_namespace_blocks(self.code[at:i]) if namespace else (self._extern(at, i),))
            return i + 1
        return self._definition(self._first(i), i)

    def _extern(self, at: int, i: int) -> str:
        """The linkage block `extern "C"` (or another language's) opened from *at* to the `{` at *i*."""
        first = self.code.index('"', at, i)
        return f'extern "{self.text[first + 1:self.code.index(chr(34), first + 1, i)]}"'

    def _definition(self, s: int, i: int) -> int:
        """Read the function or declaration whose head runs from *s* to the `{` at *i*."""
        code, text = self.code, self.text
        close = match_close(code, i)
        close = len(code) - 1 if close < 0 else close
        tried = _TRY.search(code, s, i) if _ends_with_word(code, s, i, ("try",)) else None
        head_end = i if tried is None else tried.start()
        found = _declarator(code, s, head_end)
        if found is None:
            end = self._declaration_end(close)
            self._add(ItemKind.DECLARATION, s, end)
            return end
        end = close + 1 if tried is None else _handlers_end(code, close + 1)
        parts = [p.strip() for p in found.qualified.split("::")]
        returns = uncommented(text[s:found.name_start], code[s:found.name_start])
        after = found.params[1] + 1
        suffix = uncommented(text[after:head_end], code[after:head_end])
        if found.arrow is not None and re.search(r"\bauto$", returns):
            returns = (returns[:-len("auto")] + uncommented(text[found.arrow + 2:head_end],
                                                             code[found.arrow + 2:head_end])).strip()
            suffix = uncommented(text[after:found.arrow], code[after:found.arrow])
        self._add(ItemKind.FUNCTION, s, end, name=parts[-1],
                  params=_params(text[found.params[0]:found.params[1]], code[found.params[0]:found.params[1]]),
                  returns=returns, body=(i + 1, close) if tried is None else (head_end, end),
                  qualifier=tuple(parts[:-1]), suffix=suffix)
        return end

    def _declaration_end(self, close: int) -> int:
        """Where a declaration whose braces close at *close* ends: at its `;` (`struct S {...} s;`), or
        at the brace itself where another block or a directive comes first (a definition not read as one)."""
        after = _DECLARATION_END.search(self.code, close + 1)
        return after.end() if after is not None and after.group() == ";" else close + 1


def read(path: str, raw: str, config: Config, blocks: tuple[str, ...] = ()) -> SourceFile:
    """The items of one file, its conditionals resolved for *config*; *blocks* are those its
    #include sits in (a file included inside a namespace declares its names there)."""
    text, code, branches = resolve(raw, mask(raw), config)
    return source_file(path, text, code, branches, blocks)


def source_file(path: str, text: str, code: str, branches: list[Branch], blocks: tuple[str, ...] = ()) -> SourceFile:
    """The items of a file whose conditionals are resolved (*text* and its mask *code*), read in *blocks*."""
    return SourceFile(path, text, code, _Reader(text, code, blocks).read(), tuple(branches))
