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
close what it opens, and each condition must be one the preprocessor takes (and
computes: a division by zero it refuses too)."""

from __future__ import annotations

import bisect
import operator
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


@dataclass(frozen=True)
class Problem:
    """Why a text cannot be pasted as it is: a sentence that names the place by its line and
    column, and that place's offset in the text as given."""

    message: str
    offset: int

    def __str__(self) -> str:
        return self.message


def problem(text: str, *, expression: bool = False, directives: bool = False) -> Problem | None:
    """Why *text* cannot be pasted as it is, or None: an unclosed comment, string, raw
    string or character literal, a bracket closed that it did not open or left open, a
    conditional group left open, a preprocessor directive other than a conditional group
    (allowed with *directives*: for text pasted into a file of its own vendor, not into code
    shared with other ops), a character that is not C++ outside a literal or comment, and,
    with *expression*, a ';' outside its brackets (which would end the statement it is in),
    a // comment (which would swallow what follows it on the line) or any directive."""
    found = _unreadable_whole(text)
    return found if found is not None else _Reader(text, expression, directives).problem()


def _unreadable_whole(text: str) -> Problem | None:
    """What makes *text* unreadable before its first token: a backslash at its end, a control character."""
    backslash = re.search(r"\\[ \t\f\v]*(?:\r\n|\r|\n)?\Z", text)
    if backslash is not None:
        return Problem("the text ends in a backslash, which would join it to the line written after it",
                       backslash.start())
    control = CONTROL.search(text)
    if control is not None:     # g++ reads NUL as a space, and so joins lines or opens directives unseen
        return _fault(text, control.start(), f"the control character U+{ord(control.group()):04X}",
                      "is not C++ text")
    return None


def located(text: str, *, directives: bool = False) -> tuple[str, int, int] | None:
    """problem() of *text*, with the line and column (from 1) of the place it names."""
    found = problem(text, directives=directives)
    if found is None:
        return None
    return (found.message, *line_and_column(text, found.offset))


@dataclass(frozen=True)
class Token:
    """A token of C++ text: its spelling (an alternative token for a bracket spelled as the
    bracket) and its offset in the text as given."""

    text: str
    offset: int


def tokens(text: str) -> tuple[Token, ...] | None:
    """The tokens of *text* as problem() reads them (its directives allowed): comments and
    preprocessor lines left out, a name, number or literal whole, a punctuator one character
    each but for `::`, `<<` and `%=`; None when problem() finds something wrong with *text*."""
    reader = _Reader(text, False, True, keep_tokens=True)
    if _unreadable_whole(text) is not None or reader.problem() is not None:
        return None
    return tuple(reader.tokens)


@dataclass
class _Group:
    """An open #if group. Its branch so far left the brackets as they were at the #if when as
    many are open as then (*depth*) and never fewer were (*low*): so no copy of them is kept."""

    start: int              # where its #if is
    depth: int              # the brackets open before it
    low: int                # the fewest open in its current branch so far
    had_else: bool = False


class _Reader:
    def __init__(self, text: str, expression: bool, directives: bool, *, keep_tokens: bool = False) -> None:
        self.original = text
        self.expression = expression
        self.directives = directives
        self.s, self.at = _phase2(text)
        self.stack: list[tuple[str, int]] = []
        self.groups: list[_Group] = []     # the open #if groups, innermost last
        self.tokens: list[Token] | None = [] if keep_tokens else None     # the tokens read, when kept

    def fault(self, i: int, what: str, rest: str) -> Problem:
        """The Problem "*what* at <the place of offset *i* of the joined text> *rest*"."""
        return _fault(self.original, self.at(i), what, rest)

    def problem(self) -> Problem | None:
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
                    return self.fault(i, "the // comment", "would swallow what is written after the "
                                      "expression on its line: write /* */")
                end = s.find("\n", i)
                i = n if end < 0 else end
                why = None
            elif two == "/*":
                end, why = self._comment(i)
                line_start = at_start or "\n" in s[i:end]     # a comment before a directive is a space
                i = end
            else:
                end, why = self._token(i)
                if self.tokens is not None:
                    spelled = s[i:end]
                    self.tokens.append(Token(_DIGRAPHS.get(spelled, spelled), self.at(i)))
                i = end
            if why is not None:
                return why
        if self.groups:
            return self.fault(self.groups[-1].start, "the #if", "has no #endif")
        if self.stack:
            ch, at = self.stack[-1]
            return self.fault(at, f"'{ch}'", f"is not closed ({_OPEN[ch]})")
        return None

    def _token(self, i: int) -> tuple[int, Problem | None]:
        """Past the number, name, literal or punctuator at *i*, or why it cannot be read."""
        s, ch = self.s, self.s[i]
        if ch in _DIGITS or (ch == "." and s[i + 1:i + 2] in _DIGITS):
            return _NUMBER.match(s, i).end(), None
        if _name_char(ch):
            return self._name(i)
        if ch in "\"'":
            return self._literal(i)
        return self._punctuator(i)

    def _comment(self, i: int) -> tuple[int, Problem | None]:
        """Past the /* comment at *i*, or why it cannot be."""
        end = self.s.find("*/", i + 2)
        if end < 0:
            return len(self.s), self.fault(i, "the comment opened", "is not closed (*/)")
        return end + 2, None

    def _name(self, i: int) -> tuple[int, Problem | None]:
        s, start = self.s, i
        i = _name_end(s, i)
        word = s[start:i]
        if word == "_Pragma" or "PRAGMA" in word:      # _Pragma, or a macro made of it (torch's _C10_PRAGMA_)
            return i, self.fault(start, word, "would change the code around the text")
        if word in _RAW_PREFIXES and s.startswith('"', i):
            return self._raw(start, i)
        return i, None

    def _raw(self, start: int, i: int) -> tuple[int, Problem | None]:
        s = self.s
        opened = _RAW_OPEN.match(s, i)
        if opened is None:
            return i, self.fault(start, "the raw string", "has no delimiter of basic characters and '(' after "
                                 "its quote")
        close = f"){opened.group(1)}\""
        end = s.find(close, opened.end())
        if end < 0:
            return i, self.fault(start, "the raw string opened", f"is not closed ({close})")
        end += len(close)
        if self.at(end - 1) - self.at(start) != end - 1 - start:
            return i, self.fault(start, "the raw string", "spans a CR or a backslash at the end of a line, which a "
                                 "raw string keeps as written")
        return self._suffix(end), None

    def _literal(self, i: int) -> tuple[int, Problem | None]:
        s, quote = self.s, self.s[i]
        j = i + 1
        while j < len(s):
            ch = s[j]
            if ch == "\\":
                j += 2
            elif ch == quote:
                if quote == "'" and j == i + 1:
                    return j, self.fault(i, "the character literal", "is empty ('')")
                return self._suffix(j + 1), None
            elif ch == "\n":
                break
            else:
                j += 1
        what = "string" if quote == '"' else "character"
        return j, self.fault(i, f"the {what} literal opened", f"is not closed on its line ({quote})")

    def _suffix(self, i: int) -> int:
        """Past the user-defined-literal suffix (a name, never a raw string's prefix) at *i*."""
        return _name_end(self.s, i) if i < len(self.s) and _name_char(self.s[i]) else i

    def _punctuator(self, i: int) -> tuple[int, Problem | None]:
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
                return i, self.fault(i, f"'{s[i:i + width]}'", "closes a bracket it did not open")
            self.stack.pop()
            if self.groups:
                self.groups[-1].low = min(self.groups[-1].low, len(self.stack))
        elif ch == ";" and self.expression and not self.stack:
            return i, self.fault(i, "';'", "would end the statement the expression is pasted into")
        elif ch == "," and self.expression and not self.stack:
            return i, self.fault(i, "','", "outside brackets would make the expression two (a second declaration "
                                 "after an alloc's): write it in parentheses")
        elif ch in "@`" or ord(ch) > 127:
            return i, self.fault(i, f"the character U+{ord(ch):04X}", "is not C++ outside a string or comment")
        return i + width, None

    def _directive(self, i: int) -> tuple[int, Problem | None]:
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
            return i, self.fault(start, shown, "cannot stand in an expression")
        if kind is None and self.directives:
            end, why = self._line_end(name_end)
            if why is None and name == "define":        # a macro that opens or closes a bracket hides it
                inner = _Reader(s[name_end:end], False, False).problem()
                if inner is not None:
                    why = self.fault(start, "the macro #define", f"cannot be pasted as it is: {inner.message} "
                                     "(in its line)")
            return end, why
        if kind is None:
            return i, self.fault(start, shown, "would change the code around the text: only "
                                 "#if/#ifdef/#ifndef/#elif/#else/#endif groups may be pasted")
        line_end = s.find("\n", name_end)
        rest = s[name_end:line_end if line_end >= 0 else len(s)].strip()
        if name != "else" and name != "endif" and not rest:
            return i, self.fault(start, f"#{name}", f"has no {'name' if 'def' in name else 'condition'}")
        if kind != "open":
            if not self.groups:
                return i, self.fault(start, f"#{name}", "has no #if")
            group = self.groups[-1]
            if len(self.stack) != group.depth or group.low < group.depth:
                return i, self.fault(start, f"the branch before #{name}", "does not close the brackets it opens, "
                                     "or closes brackets opened before its #if")
            if group.had_else and kind == "else":
                return i, self.fault(start, f"#{name}", "comes after the group's #else")
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
                why = self.fault(start, f"the condition of #{name}", wrong)
        return end, why

    def _line_end(self, i: int) -> tuple[int, Problem | None]:
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
# The binary operators of a condition, by precedence (the higher binds tighter).
_PRECEDENCE = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7, "<=": 7, ">=": 7,
               "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}
_UNARY = frozenset({"+", "-", "!", "~"})
_ARITHMETIC = {"*": operator.mul, "+": operator.add, "-": operator.sub, "&": operator.and_, "^": operator.xor,
               "|": operator.or_}
_COMPARISONS = {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge, "==": operator.eq,
                "!=": operator.ne}
_MAX_NESTING = 256
# g++ computes a condition in intmax_t, or uintmax_t when an operand is unsigned: 64 bits wide.
_BITS = 64
# The operators the preprocessor adds for #if, each of one operand in parentheses -> what that is.
_HAS_OPERATORS = {"__has_include": "a header name", "__has_include_next": "a header name",
                  "__has_cpp_attribute": "an attribute name", "__has_c_attribute": "an attribute name",
                  "__has_attribute": "an attribute name", "__has_builtin": "a name"}
# C++ operators the preprocessor does not have: it reads each as a name (0), then refuses the ( after it.
_NOT_PREPROCESSOR = frozenset({"sizeof", "alignof", "decltype", "noexcept", "typeid"})


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


@dataclass(frozen=True)
class _Number:
    """A value as the preprocessor computes it: in the range of intmax_t, or of uintmax_t when
    *unsigned*. Where a condition holds a name (a macro, or 0), the value is not known here
    and is None instead."""

    value: int
    unsigned: bool = False


class _Condition:
    """A check of a #if expression's shape: operands (numbers, character literals, names,
    macro calls, `defined X`, parenthesised expressions, with unary operators before them)
    joined by binary operators and ?: ; and of the division by zero the preprocessor refuses,
    where the divisor and whether it is computed depend on no name."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.i, self.depth = tokens, 0, 0
        # How many enclosing operands the preprocessor may skip (an operand of &&, || or ?:
        # that the operand before it leaves out, or may, by a value not known here).
        self.unsure = 0

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

    def _expression(self) -> _Number | None:
        self.depth += 1
        if self.depth > _MAX_NESTING:
            raise ValueError(f"is nested more than {_MAX_NESTING} deep")
        value = self._binary()
        if self._peek() == "?":
            self.i += 1
            yes = self._maybe_skipped(value is None or value.value == 0)
            self._expect(":", "has a ? without its :")
            no = self._maybe_skipped(value is None or value.value != 0)
            value = _chosen(value, yes, no)
        self.depth -= 1
        return value

    def _maybe_skipped(self, unsure: bool) -> _Number | None:
        """The expression next, which the preprocessor may skip when *unsure*."""
        self.unsure += unsure
        value = self._expression()
        self.unsure -= unsure
        return value

    def _binary(self) -> _Number | None:
        """Operands joined by binary operators, each applied in the order its precedence says
        (a stack of them, not a call per precedence, keeps deep nesting within Python's)."""
        values = [self._operand()]
        pending: list[tuple[str, bool]] = []        # (operator, whether its right operand may be skipped)
        while (op := self._peek()) in _PRECEDENCE:
            self.i += 1
            while pending and _PRECEDENCE[pending[-1][0]] >= _PRECEDENCE[op]:
                self._apply(values, *pending.pop())
            left = values[-1]
            unsure = op in ("&&", "||") and (left is None or (left.value == 0) == (op == "&&"))
            self.unsure += unsure
            pending.append((op, unsure))
            values.append(self._operand())
        while pending:
            self._apply(values, *pending.pop())
        return values[0]

    def _apply(self, values: list[_Number | None], op: str, unsure: bool) -> None:
        """The last two of *values* replaced by *op* applied to them."""
        right = values.pop()
        left = values.pop()
        self.unsure -= unsure
        if op in ("/", "%") and right is not None and right.value == 0:
            if not self.unsure:
                raise ValueError(f"divides by zero (the divisor of '{op}' is 0), which the preprocessor refuses")
            values.append(left)
        else:
            values.append(None if left is None or right is None else _binary_value(op, left, right))

    def _operand(self) -> _Number | None:
        unary = []
        while (token := self._peek()) in _UNARY:
            unary.append(token)
            self.i += 1
        token = self._peek()
        if token is None:
            raise ValueError("ends where an operand belongs")
        self.i += 1
        value = None
        if token == "(":
            value = self._expression()
            self._expect(")", "has a ( without its )")
        elif token == "defined":
            self._defined()
        elif _is_name(token):
            self._name(token)
        elif token[0] in _DIGITS or token[0] == ".":
            if not _INTEGER.fullmatch(token):
                raise ValueError(f"has {token!r}, which is no integer constant (a condition computes in integers)")
            value = _integer(token)
        elif not token.endswith("'"):       # a character's value is the compiler's: not known here
            raise ValueError(f"has {token!r} where an operand belongs")
        for op in reversed(unary):
            value = _unary_value(op, value)
        return value

    def _defined(self) -> None:
        parens = self._peek() == "("
        self.i += parens
        name = self._peek()
        if name is None or not _is_name(name):
            raise ValueError("has `defined` without a macro name")
        self.i += 1
        if parens:
            self._expect(")", "has defined( without its )")

    def _name(self, token: str) -> None:
        """Past a name and the arguments of its call, if it is one."""
        call = self._peek() == "("
        if token in _HAS_OPERATORS and (not call or self.tokens[self.i + 1:self.i + 2] == [")"]):
            raise ValueError(f"has {token} without {_HAS_OPERATORS[token]} in parentheses after it, "
                             "which the preprocessor requires")
        if token in _NOT_PREPROCESSOR and call:
            raise ValueError(f"has {token}(, but {token} is no preprocessor operator: the preprocessor reads "
                             "it as a name (0) and refuses the ( after it")
        if call:            # a macro's call (or a __has_ operator's): its arguments, balanced
            depth = 0
            while (t := self._peek()) is not None:
                self.i += 1
                depth += (t == "(") - (t == ")")
                if depth == 0:
                    break
            if depth:
                raise ValueError(f"has a call of {token} without its )")


def _integer(token: str) -> _Number | None:
    """The value of an integer literal; None for one too large for uintmax_t (g++ cuts it)."""
    written = token.rstrip("uUlLzZ")
    digits = written.replace("'", "")
    base = 16 if digits[:2] in ("0x", "0X") else 2 if digits[:2] in ("0b", "0B") else 8 if digits[0] == "0" else 10
    value = int(digits, base)
    if value >> _BITS:
        return None
    # One beyond intmax_t is unsigned, as one with a u is.
    return _Number(value, "u" in token[len(written):].lower() or value >> (_BITS - 1) == 1)


def _wrapped(value: int, unsigned: bool) -> _Number:
    """*value* cut to the preprocessor's width, as its type keeps it."""
    value &= (1 << _BITS) - 1
    if not unsigned and value >> (_BITS - 1):
        value -= 1 << _BITS
    return _Number(value, unsigned)


def _unary_value(op: str, operand: _Number | None) -> _Number | None:
    if operand is None:
        return None
    if op == "!":
        return _Number(int(operand.value == 0))
    if op == "-":
        return _wrapped(-operand.value, operand.unsigned)
    if op == "~":
        return _wrapped(~operand.value, operand.unsigned)
    return operand


def _binary_value(op: str, left: _Number, right: _Number) -> _Number:
    """*op* applied as the preprocessor applies it (a divisor is not 0)."""
    if op in ("&&", "||"):
        truth = (left.value != 0 and right.value != 0) if op == "&&" else (left.value != 0 or right.value != 0)
        return _Number(int(truth))
    if op in ("<<", ">>"):
        return _shifted(op, left, right)
    unsigned = left.unsigned or right.unsigned          # the usual arithmetic conversions
    x, y = _wrapped(left.value, unsigned).value, _wrapped(right.value, unsigned).value
    if op in ("/", "%"):
        quotient = abs(x) // abs(y) * (-1 if (x < 0) != (y < 0) else 1)     # C truncates toward zero
        return _wrapped(quotient if op == "/" else x - y * quotient, unsigned)
    if op in _COMPARISONS:
        return _Number(int(_COMPARISONS[op](x, y)))
    return _wrapped(_ARITHMETIC[op](x, y), unsigned)


def _shifted(op: str, left: _Number, right: _Number) -> _Number:
    """A shift as g++ computes it: of the left operand's type, a negative count shifting the
    other way, a count of the width or more shifting every bit out."""
    count = right.value
    if count < 0:
        op, count = ("<<" if op == ">>" else ">>"), -count
    count = min(count, _BITS)
    return _wrapped(left.value << count if op == "<<" else left.value >> count, left.unsigned)


def _chosen(condition: _Number | None, yes: _Number | None, no: _Number | None) -> _Number | None:
    """The value of `condition ? yes : no`, of the type both branches convert to."""
    if condition is None or yes is None or no is None:
        return None
    return _wrapped((yes if condition.value else no).value, yes.unsigned or no.unsigned)


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


def _fault(text: str, i: int, what: str, rest: str) -> Problem:
    """The Problem "*what* at line L column C *rest*", at offset *i* of *text*."""
    line, column = line_and_column(text, i)
    return Problem(f"{what} at line {line} column {column} {rest}", i)


def line_and_column(text: str, i: int) -> tuple[int, int]:
    """Line and column of offset *i* in *text*, both counted from 1."""
    return text.count("\n", 0, i) + 1, i - (text.rfind("\n", 0, i) + 1) + 1
