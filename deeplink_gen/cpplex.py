"""Whether a piece of C++ from a YAML file can stand where it is pasted: read
as the compiler's lexer reads it, in one pass, so that a comment, a string or
a bracket left open there cannot swallow or end the generated code around it
(an unclosed `/*` that comments out the rest of the file, a `}` that ends the
generated function and starts code of its own).

The text is read after the compiler's first translation phases (a CR or CRLF
ends a line, a backslash at the end of a line joins it to the next), with the
alternative tokens for brackets (`<%` is `{`, `%>` is `}`, `<:` `[`, `:>` `]`),
and with the preprocessor's lines: only conditional groups (#if ... #endif) may
be pasted, since any other directive (#define, #undef, #include, #line, #pragma,
_Pragma) changes the generated code around the text; each branch of a group must
close what it opens, and each condition must be one the preprocessor takes."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}
_DIGRAPHS = {"<%": "{", "%>": "}", "<:": "[", ":>": "]"}
# A pp-number (a `'` in it is C++14's digit separator, no quote), read whole.
_NUMBER = re.compile(r"\.?[0-9](?:[eEpP][+-]|[\w.$]|'(?=\w)|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*")
_DIGITS = frozenset("0123456789")
# The control characters no C or C++ text holds (tab, line ends, VT and FF are spaces).
CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_SPACE = re.compile(r"[ \t\f\v]+")
_WORD = re.compile(r"(?:[A-Za-z0-9_$]|\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8})*")
_ASCII_NAME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_$0123456789")
_RAW_PREFIXES = frozenset({"R", "u8R", "uR", "UR", "LR"})
# A raw string's delimiter (the basic source characters but space, parentheses and backslash) and its '('.
_RAW_OPEN = re.compile(r'"([A-Za-z0-9_{}\[\]#<>%:;.?*+\-/^&|~!=,"\']{0,16})\(')
# Translation phases 1 and 2: a CR or CRLF is a line break; a backslash before one (spaces between
# allowed, as g++ allows them) joins the two lines.
_PHASE2 = re.compile(r"\\[ \t\f\v]*(?:\r\n|\r|\n)|\r\n?")
_CONDITIONAL = {"if": "open", "ifdef": "open", "ifndef": "open", "elif": "else", "elifdef": "else",
                "elifndef": "else", "else": "else", "endif": "close"}


def problem(text: str, *, expression: bool = False, directives: bool = False) -> str | None:
    """Why *text* cannot be pasted as it is, or None: an unclosed comment, string, raw
    string or character literal, a bracket closed that it did not open or left open, a
    conditional group left open, a preprocessor directive other than a conditional group
    (allowed with *directives*: for text pasted into a file of its own vendor, not into code
    shared with other ops), a character that is not C++ outside a literal or comment, and,
    with *expression*, a ';' outside its brackets (which would end the statement it is in),
    a // comment (which would swallow what follows it on the line) or any directive."""
    if re.search(r"\\[ \t\f\v]*(?:\r\n|\r|\n)?\Z", text):
        return "the text ends in a backslash, which would join it to the line written after it"
    control = CONTROL.search(text)
    if control is not None:     # g++ reads NUL as a space, and so joins lines or opens directives unseen
        return (f"the control character U+{ord(control.group()):04X} at {_where(text, control.start())} "
                "is not C++ text")
    return _Reader(text, expression, directives).problem()


_AT = re.compile(r"at line (\d+) column (\d+)")


def located(text: str, *, directives: bool = False) -> tuple[str, int, int] | None:
    """problem() of *text*, with the line and column (from 1) of the first place it names."""
    why = problem(text, directives=directives)
    if why is None:
        return None
    at = _AT.search(why)
    return (why, int(at.group(1)), int(at.group(2))) if at else (why, 1, 1)


@dataclass
class _Group:
    """An open #if group. Its branch so far left the brackets as they were at the #if when as
    many are open as then (*depth*) and never fewer were (*low*): so no copy of them is kept."""

    start: int              # where its #if is
    depth: int              # the brackets open before it
    low: int                # the fewest open in its current branch so far
    had_else: bool = False


class _Reader:
    def __init__(self, text: str, expression: bool, directives: bool) -> None:
        self.original = text
        self.expression = expression
        self.directives = directives
        self.s, self.at = _phase2(text)
        self.stack: list[tuple[str, int]] = []
        self.groups: list[_Group] = []     # the open #if groups, innermost last

    def where(self, i: int) -> str:
        """Line and column in the original text of offset *i* of the joined text, counted from 1."""
        return _where(self.original, self.at(i))

    def problem(self) -> str | None:
        s, n, i = self.s, len(self.s), 0
        line_start = True
        while i < n:
            ch = s[i]
            if ch == "\n":
                line_start = True
                i += 1
                continue
            if ch in " \t\f\v":
                i = _SPACE.match(s, i).end()
                continue
            at_start, line_start = line_start, False
            two = s[i:i + 2]
            if at_start and (ch == "#" or two == "%:"):
                i, why = self._directive(i)
            elif two == "//":
                if self.expression:
                    return (f"the // comment at {self.where(i)} would swallow what is written after the "
                            "expression on its line: write /* */")
                end = s.find("\n", i)
                i = n if end < 0 else end
                why = None
            elif two == "/*":
                end, why = self._comment(i)
                line_start = at_start or "\n" in s[i:end]     # a comment before a directive is a space
                i = end
            elif ch in _DIGITS or (ch == "." and i + 1 < n and s[i + 1] in _DIGITS):
                i, why = _NUMBER.match(s, i).end(), None
            elif _name_char(ch):
                i, why = self._name(i)
            elif ch in "\"'":
                i, why = self._literal(i)
            else:
                i, why = self._punctuator(i)
            if why is not None:
                return why
        if self.groups:
            return f"the #if at {self.where(self.groups[-1].start)} has no #endif"
        if self.stack:
            ch, at = self.stack[-1]
            return f"'{ch}' at {self.where(at)} is not closed ({_OPEN[ch]})"
        return None

    def _comment(self, i: int) -> tuple[int, str | None]:
        """Past the /* comment at *i*, or why it cannot be."""
        end = self.s.find("*/", i + 2)
        if end < 0:
            return len(self.s), f"the comment opened at {self.where(i)} is not closed (*/)"
        return end + 2, None

    def _name(self, i: int) -> tuple[int, str | None]:
        s, start = self.s, i
        i = _name_end(s, i)
        word = s[start:i]
        if word == "_Pragma" or "PRAGMA" in word:      # _Pragma, or a macro made of it (torch's _C10_PRAGMA_)
            return i, f"{word} at {self.where(start)} would change the code around the text"
        if word in _RAW_PREFIXES and s.startswith('"', i):
            return self._raw(start, i)
        return i, None

    def _raw(self, start: int, i: int) -> tuple[int, str | None]:
        s = self.s
        opened = _RAW_OPEN.match(s, i)
        if opened is None:
            return i, (f"the raw string at {self.where(start)} has no delimiter of basic characters "
                       "and '(' after its quote")
        close = f"){opened.group(1)}\""
        end = s.find(close, opened.end())
        if end < 0:
            return i, f"the raw string opened at {self.where(start)} is not closed ({close})"
        end += len(close)
        if self.at(end - 1) - self.at(start) != end - 1 - start:
            return i, (f"the raw string at {self.where(start)} spans a CR or a backslash at the end of a "
                       "line, which a raw string keeps as written")
        return self._suffix(end), None

    def _literal(self, i: int) -> tuple[int, str | None]:
        s, quote = self.s, self.s[i]
        j = i + 1
        while j < len(s):
            ch = s[j]
            if ch == "\\":
                j += 2
            elif ch == quote:
                if quote == "'" and j == i + 1:
                    return j, f"the character literal at {self.where(i)} is empty ('')"
                return self._suffix(j + 1), None
            elif ch == "\n":
                break
            else:
                j += 1
        what = "string" if quote == '"' else "character"
        return j, f"the {what} literal opened at {self.where(i)} is not closed on its line ({quote})"

    def _suffix(self, i: int) -> int:
        """Past the user-defined-literal suffix (a name, never a raw string's prefix) at *i*."""
        return _name_end(self.s, i) if i < len(self.s) and _name_char(self.s[i]) else i

    def _punctuator(self, i: int) -> tuple[int, str | None]:
        s = self.s
        ch, two = s[i], s[i:i + 2]
        if two in ("::", "<<", "%=", "%:"):
            return i + 2, None
        if two == "<:" and s[i + 2:i + 3] == ":" and s[i + 3:i + 4] not in (":", ">"):
            return i + 1, None                         # <:: is < and ::, as in static_cast<::T>
        bracket = _DIGRAPHS.get(two)
        width = 2 if bracket else 1
        bracket = bracket or ch
        if bracket in _OPEN:
            self.stack.append((bracket, i))
        elif bracket in _CLOSE:
            if not self.stack or self.stack[-1][0] != _CLOSE[bracket]:
                return i, f"'{s[i:i + width]}' at {self.where(i)} closes a bracket it did not open"
            self.stack.pop()
            if self.groups:
                self.groups[-1].low = min(self.groups[-1].low, len(self.stack))
        elif ch == ";" and self.expression and not self.stack:
            return i, f"';' at {self.where(i)} would end the statement the expression is pasted into"
        elif ch == "," and self.expression and not self.stack:
            return i, (f"',' at {self.where(i)} outside brackets would make the expression two "
                       "(a second declaration after an alloc's): write it in parentheses")
        elif ch in "@`" or ord(ch) > 127:
            return i, (f"the character U+{ord(ch):04X} at {self.where(i)} is not C++ outside a string "
                       "or comment")
        return i + width, None

    def _directive(self, i: int) -> tuple[int, str | None]:
        """A preprocessor line at *i*: a conditional group's line is kept track of (each branch
        must close the brackets it opens); any other directive is refused."""
        s, start = self.s, i
        i += 1 if s[i] == "#" else 2
        while i < len(s) and s[i] in " \t":
            i += 1
        name_end = _name_end(s, i) if i < len(s) and _name_char(s[i]) else i
        name = s[i:name_end]
        kind = _CONDITIONAL.get(name)
        shown = f"#{name}" if name else "a # line"
        if self.expression:
            return i, f"{shown} at {self.where(start)} cannot stand in an expression"
        if kind is None and self.directives:
            end, why = self._line_end(name_end)
            if why is None and name == "define":        # a macro that opens or closes a bracket hides it
                inner = _Reader(s[name_end:end], False, False).problem()
                if inner is not None:
                    why = f"the macro #define at {self.where(start)} cannot be pasted as it is: {inner} (in its line)"
            return end, why
        if kind is None:
            return i, (f"{shown} at {self.where(start)} would change the code around the text: only "
                       "#if/#ifdef/#ifndef/#elif/#else/#endif groups may be pasted")
        line_end = s.find("\n", name_end)
        rest = s[name_end:line_end if line_end >= 0 else len(s)].strip()
        if name != "else" and name != "endif" and not rest:
            return i, f"#{name} at {self.where(start)} has no {'name' if 'def' in name else 'condition'}"
        if kind != "open":
            if not self.groups:
                return i, f"#{name} at {self.where(start)} has no #if"
            group = self.groups[-1]
            if len(self.stack) != group.depth or group.low < group.depth:
                return i, (f"the branch before #{name} at {self.where(start)} does not close the brackets it "
                           "opens, or closes brackets opened before its #if")
            if group.had_else and kind == "else":
                return i, f"#{name} at {self.where(start)} comes after the group's #else"
            group.low, group.had_else = group.depth, group.had_else or name == "else"
            if kind == "close":
                self.groups.pop()
                if self.groups:         # the closed group's branches are part of the enclosing branch
                    self.groups[-1].low = min(self.groups[-1].low, group.low)
        else:
            self.groups.append(_Group(start, len(self.stack), len(self.stack)))
        end, why = self._line_end(name_end)
        if why is None and name not in ("else", "endif"):
            wrong = condition_problem(s[name_end:end], "def" not in name)
            if wrong is not None:
                why = f"the condition of #{name} at {self.where(start)} {wrong}"
        return end, why

    def _line_end(self, i: int) -> tuple[int, str | None]:
        """Past the rest of a directive's line (its comments, numbers, names and literals read
        whole, as elsewhere: a `'` in a number or a raw string opens no literal)."""
        s = self.s
        while i < len(s) and s[i] != "\n":
            if s[i] in _DIGITS or (s[i] == "." and s[i + 1:i + 2].isdigit()):
                i = _NUMBER.match(s, i).end()
            elif _name_char(s[i]):
                i, why = self._name(i)
                if why is not None:
                    return i, why
            elif s.startswith("/*", i):
                i, why = self._comment(i)
                if why is not None:
                    return i, why
            elif s.startswith("//", i):
                end = s.find("\n", i)
                return (len(s) if end < 0 else end), None
            elif s[i] in "\"'":
                i, why = self._literal(i)
                if why is not None:
                    return i, why
            else:
                i += 1
        return i, None


# A #if condition's tokens: a comment is a space; a number, a literal, a name, an operator of two
# characters or any other character is one token.
_COND_TOKEN = re.compile(r"""\s+|/\*.*?\*/|//.*|(?P<t>\.?[0-9](?:[eEpP][+-]|[\w.']|\\u[0-9A-Fa-f]{4})*"""
                         r"""|(?:u8|u|U|L)?'(?:\\.|[^'\\])*'|(?:u8|u|U|L)?"(?:\\.|[^"\\])*"|[A-Za-z_$\x80-\U0010ffff]"""
                         r"""[\w$\x80-\U0010ffff]*|&&|\|\||<<|>>|<=|>=|==|!=|\S)""", re.S)
# An integer literal as C++ writes one (digit separators and suffixes included).
_INTEGER = re.compile(r"(?:0[xX][0-9a-fA-F](?:'?[0-9a-fA-F])*|0[bB][01](?:'?[01])*|0(?:'?[0-7])*|[1-9](?:'?[0-9])*)"
                      r"(?:[uU](?:ll|LL|[lLzZ])?|(?:ll|LL|[lLzZ])[uU]?)?")
_BINARY = frozenset({"*", "/", "%", "+", "-", "<<", ">>", "<", ">", "<=", ">=", "==", "!=", "&", "^", "|", "&&", "||"})
_UNARY = frozenset({"+", "-", "!", "~"})
_MAX_NESTING = 256


def condition_problem(text: str, expression: bool) -> str | None:
    """Why *text*, the rest of a #if/#elif line (*expression*) or of an #ifdef/#ifndef line,
    is not what the preprocessor takes there (a phrase), or None. A name followed by
    parentheses is a macro's call, whose arguments are the macro's business."""
    tokens: list[str] = []
    i = 0
    while i < len(text):
        m = _COND_TOKEN.match(text, i)
        if m.group("t"):
            tokens.append(m.group("t"))
        i = m.end()
    if not expression:
        return None if len(tokens) == 1 and _is_name(tokens[0]) else "is not one macro name"
    return _Condition(tokens).problem()


class _Condition:
    """A check of a #if expression's shape: operands (numbers, character literals, names,
    macro calls, `defined X`, parenthesised expressions, with unary operators before them)
    joined by binary operators and ?: ."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.i, self.depth = tokens, 0, 0

    def _peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def problem(self) -> str | None:
        try:
            self._expression()
        except ValueError as exc:
            return str(exc)
        token = self._peek()
        return None if token is None else f"has {token!r} where an operator or the line's end belongs"

    def _expect(self, token: str, why: str) -> None:
        """Past *token*, which must come next (else ValueError(*why*))."""
        if self._peek() != token:
            raise ValueError(why)
        self.i += 1

    def _expression(self) -> None:
        self.depth += 1
        if self.depth > _MAX_NESTING:
            raise ValueError(f"is nested more than {_MAX_NESTING} deep")
        self._operand()
        while (token := self._peek()) in _BINARY or token == "?":
            self.i += 1
            if token == "?":
                self._expression()
                self._expect(":", "has a ? without its :")
            self._operand()
        self.depth -= 1

    def _operand(self) -> None:
        while self._peek() in _UNARY:
            self.i += 1
        token = self._peek()
        if token is None:
            raise ValueError("ends where an operand belongs")
        self.i += 1
        if token == "(":
            self._expression()
            self._expect(")", "has a ( without its )")
        elif token == "defined":
            parens = self._peek() == "("
            self.i += parens
            name = self._peek()
            if name is None or not _is_name(name):
                raise ValueError("has `defined` without a macro name")
            self.i += 1
            if parens:
                self._expect(")", "has defined( without its )")
        elif _is_name(token):
            if self._peek() == "(":             # a macro's call: its arguments, balanced
                depth = 0
                while (t := self._peek()) is not None:
                    self.i += 1
                    depth += (t == "(") - (t == ")")
                    if depth == 0:
                        break
                if depth:
                    raise ValueError(f"has a call of {token} without its )")
        elif token[0] in _DIGITS or token[0] == ".":
            if not _INTEGER.fullmatch(token):
                raise ValueError(f"has {token!r}, which is no integer constant (a condition computes in integers)")
        elif token.endswith("'"):
            pass
        else:
            raise ValueError(f"has {token!r} where an operand belongs")


def _is_name(token: str) -> bool:
    return _name_char(token[0]) and token[0] not in _DIGITS


def _name_end(s: str, i: int) -> int:
    """Past the name that starts at *i*."""
    end = _WORD.match(s, i).end()
    while end < len(s) and ord(s[end]) > 127 and _name_char(s[end]):      # a letter beyond ASCII (rare)
        end = _WORD.match(s, end + 1).end()
    return end


def _name_char(ch: str) -> bool:
    """A character of a name: ASCII letters, digits, _ and $ (as g++ reads them), and any other
    character Python takes in a name (g++ takes the same letters of other scripts)."""
    return ch in _ASCII_NAME or (ord(ch) > 127 and ("a" + ch).isidentifier())


def _phase2(text: str):
    """*text* with its line breaks and joined lines as the compiler reads them, and a function
    from an offset of that text to the offset in *text* it came from."""
    if "\\" not in text and "\r" not in text:
        return text, lambda i: i
    pieces, kept = [], 0
    offsets = []            # (offset in the joined text, offset in *text*) where each piece starts
    last = 0
    for m in _PHASE2.finditer(text):
        pieces.append(text[last:m.start()])
        offsets.append((kept, last))
        kept += m.start() - last
        if m.group().startswith("\r"):           # a line break, written as \n
            pieces.append("\n")
            offsets.append((kept, m.start()))
            kept += 1
        last = m.end()
    pieces.append(text[last:])
    offsets.append((kept, last))
    starts = [k for k, _ in offsets]

    def at(i: int) -> int:
        k = bisect.bisect_right(starts, i) - 1
        joined, original = offsets[max(k, 0)]
        return original + (i - joined)

    return "".join(pieces), at


def _where(text: str, i: int) -> str:
    """Line and column of offset *i* in *text*, both counted from 1."""
    line = text.count("\n", 0, i) + 1
    return f"line {line} column {i - (text.rfind(chr(10), 0, i) + 1) + 1}"
