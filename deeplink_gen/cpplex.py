"""Whether a piece of C++ from a YAML file can stand where it is pasted: read
as the compiler's lexer reads it, in one pass, so that a comment, a string or
a bracket left open there cannot swallow or end the generated code around it
(an unclosed `/*` that comments out the rest of the file, a `}` that ends the
generated function and starts code of its own).

The text is read after the compiler's first translation phases (a CR or CRLF
ends a line, a backslash at the end of a line joins it to the next), with the
alternative tokens for brackets (`<%` is `{`, `%>` is `}`, `<:` `[`, `:>` `]`),
with each token's extent as g++ 12 lexes it in C++17 (a number, a name and a
literal's suffix), and with the preprocessor's lines: only conditional groups
(#if ... #endif) may be pasted, since any other directive (#define, #undef,
#include, #line, #pragma, _Pragma) changes the generated code around the text;
each branch of a group must close what it opens, and each condition must be one
the preprocessor takes (and computes: a division by zero it refuses too)."""

from __future__ import annotations

import bisect
import itertools
import operator
import re
from dataclasses import dataclass

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}
_DIGRAPHS = {"<%": "{", "%>": "}", "<:": "[", ":>": "]"}
_UCN = r"\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}"
# A pp-number as g++ lexes one: after its first digit (or . and digit), letters, digits, _, $,
# dots, a sign after e, E, p or P, a `'` (a digit separator, no quote) only before an ASCII
# letter, digit or _, and any character beyond ASCII or universal character name (g++ takes
# each into the number, and refuses the ones no name may hold).
_NUMBER = re.compile(rf"\.?[0-9](?:[A-Za-z0-9_$.]|'+(?=[A-Za-z0-9_])|(?<=[eEpP])(?<!'[eEpP])[+-]|{_UCN}|[^\x00-\x7f])*")
# A name as g++ lexes one: ASCII letters, digits, _ and $, universal character names and any
# character beyond ASCII (those that no name may hold g++ refuses, and so does problem()).
_NAME = re.compile(rf"(?:[A-Za-z_$]|{_UCN}|[^\x00-\x7f])(?:[A-Za-z0-9_$]|{_UCN}|[^\x00-\x7f])*")
# A literal's user-defined suffix: g++ takes one only of an ASCII letter or _ and then ASCII
# letters, digits and _ (a digit after a literal starts a number).
_SUFFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BEYOND_ASCII = re.compile(r"[^\x00-\x7f]")
_ASCII_NAME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_$0123456789")
_DIGITS = frozenset("0123456789")
# The control characters no C or C++ text holds (tab, line ends, VT and FF are spaces).
CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_SPACE = re.compile(r"[ \t\f\v]+")
# What is read between a directive's # and its name, and between __has_include and its
# operand: spaces and /* */ comments (a comment may end on a later line, which joins them).
_BLANK = re.compile(r"(?:[ \t\f\v]+|/\*.*?\*/)*", re.S)
_RAW_PREFIXES = frozenset({"R", "u8R", "uR", "UR", "LR"})
# A raw string's delimiter (the basic source characters but space, parentheses and backslash) and its '('.
_RAW_OPEN = re.compile(r'"([A-Za-z0-9_{}\[\]#<>%:;.?*+\-/^&|~!=,"\']{0,16})\(')
# The body of a character or string literal up to its closing quote: a backslash escapes the
# character after it but a line's end (a backslash left last by joined lines ends nothing).
_LITERAL_BODY = {"'": re.compile(r"(?:[^'\\\n]|\\.?)*"), '"': re.compile(r'(?:[^"\\\n]|\\.?)*')}
# On an #include line g++ reads <...> as one header name, and a backslash in quotes as a character.
_HEADER_BODY = {"'": re.compile(r"[^'\n]*"), '"': re.compile(r'[^"\n]*')}
_ANGLED_HEADER = re.compile(r"<[^>\n]*>")
_INCLUDES = frozenset({"include", "include_next", "import"})
_HAS_INCLUDE = frozenset({"__has_include", "__has_include_next"})
# Translation phases 1 and 2: a CR or CRLF is a line break; a backslash before one (spaces between
# allowed, as g++ allows them) joins the two lines.
_PHASE2 = re.compile(r"\\[ \t\f\v]*(?:\r\n|\r|\n)|\r\n?")
# What opens a directive at a line's start: # or %:, but not ## or %:%: (the paste operator).
_DIRECTIVE = re.compile(r"#(?!#)|%:(?!%:)")
# The conditional directives of C++17 (g++ 12 takes #elifdef and #elifndef only from C++23 on).
_CONDITIONAL = {"if": "open", "ifdef": "open", "ifndef": "open", "elif": "else", "else": "else", "endif": "close"}


# Text that problem() reads many tokens at a time, in one match, since none of its characters
# starts a comment, literal, bracket of two characters or directive: letters, digits, spaces, a
# line break not before a # or %: (a directive) or /*, plain brackets (counted after the match)
# and the punctuators that start nothing else (:: << %: whole, where their halves would start
# an alternative token). Where a quote, a backslash or a character beyond ASCII follows, the
# name or number before it is read token by token (a raw string's prefix, or a number that goes
# on past the quote).
def _plain_code(separators: str) -> re.Pattern:
    return re.compile(rf"(?:[A-Za-z0-9_$ \t\f\v(){{}}\[\]{separators}+\-*=!&|^~?>#.]+|::|:(?!>)|<<|<(?=::(?![:>]))"
                      r"|<(?![%:])|%:|%(?!>)|/(?![/*])|\n(?![ \t\f\v]*(?:#|%:|/\*)))*")


_PLAIN_CODE = _plain_code(";,")
_PLAIN_EXPRESSION = _plain_code("")       # ; and , matter outside brackets
# The same for the rest of a directive's line, whose brackets are not counted (on an #include
# line < starts a header name).
_PLAIN_LINE = re.compile(r"(?:[^\n\"'/\\\x80-\U0010ffff]+|/(?![/*]))*")
_PLAIN_INCLUDE = re.compile(r"(?:[^\n\"'/\\<\x80-\U0010ffff]+|/(?![/*]))*")
# The characters of names and numbers (a sign in a number too): plain text cut short before a
# quote is read token by token from where a run of them before the quote starts, a token's start.
_STRETCH = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$.+-")
# The names read token by token wherever they are: a pragma, and __has_include (its operand).
_STOP = re.compile(r"PRAGMA|_Pragma|__has_include")
_BRACKET = re.compile(r"[(){}\[\]]")
_PAIR = re.compile(r"\(\)|\[\]|\{\}")


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
    each but for `::`, `<<`, `%=` and `%:`; None when problem() finds something wrong with *text*."""
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
    # Whether the preprocessor reads the branch the group is in, has taken one of its branches
    # so far, and reads its current branch: True or False for sure, None where a macro decides.
    outer: bool | None
    taken: bool | None
    read: bool | None
    had_else: bool = False


class _Reader:
    def __init__(self, text: str, expression: bool, directives: bool, *, keep_tokens: bool = False) -> None:
        self.original = text
        self.expression = expression
        self.directives = directives
        self.s, self.at = _phase2(text)
        # The open brackets, innermost last: each with where it is, as _place() reads it.
        self.stack: list[tuple[str, int, int]] = []
        self.groups: list[_Group] = []     # the open #if groups, innermost last
        self.tokens: list[Token] | None = [] if keep_tokens else None     # the tokens read, when kept
        # The runs read in one match; none where each token is kept.
        self.plain = None if keep_tokens else _PLAIN_EXPRESSION if expression else _PLAIN_CODE
        self.careful_until = 0      # a token that starts before it is read on its own
        self.stop = -1              # where the next name that _STOP finds is, once looked for

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
            if at_start and _DIRECTIVE.match(s, i):
                i, why = self._directive(i)
            elif two == "//":
                if self.expression:
                    return self.fault(i, "the // comment", "would swallow what is written after the "
                                      "expression on its line: write /* */")
                end = s.find("\n", i)
                i = n if end < 0 else end
                why = None
            elif two == "/*":
                i, why = self._comment(i)
                line_start = at_start       # a comment is a space: a # after it still opens a directive
            elif self.plain is not None and i >= self.careful_until and (end := self._plain_end(i, self.plain)) > i:
                i, why = end, self._brackets(i, end)
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
            ch, start, k = self.stack[-1]
            return self.fault(self._place(start, k), f"'{ch}'", f"is not closed ({_OPEN[ch]})")
        return None

    def _token(self, i: int) -> tuple[int, Problem | None]:
        """Past the number, name, literal or punctuator at *i*, or why it cannot be read."""
        s, ch = self.s, self.s[i]
        if ch in _DIGITS or (ch == "." and s[i + 1:i + 2] in _DIGITS):
            return self._number(i)
        if ch in "\"'":
            return self._literal(i)
        if _NAME.match(s, i):
            return self._name(i)
        return self._punctuator(i)

    def _plain_end(self, i: int, plain: re.Pattern) -> int:
        """Past the text from *i* on that *plain* matches, up to the next name _STOP finds; where
        that is cut short by what may continue a name or number, back to that token's start,
        and the text from there to the token at the cut is read token by token."""
        s = self.s
        if self.stop < i:
            found = _STOP.search(s, i)
            self.stop = len(s) if found is None else found.start()
        end = cut = plain.match(s, i, self.stop).end()
        if cut < len(s) and (cut == self.stop or s[cut] in "'\"\\" or s[cut] > "\x7f"):
            while end > i and s[end - 1] in _STRETCH:
                end -= 1
            self.careful_until = cut + 1
        return end

    def _brackets(self, start: int, end: int) -> Problem | None:
        """The plain brackets from *start* to *end* opened and closed, or why one cannot be. A
        bracket is kept as the how-manieth of them it is (its offset is looked up only for a
        message), which keeps a run of many brackets quick to read."""
        brackets = "".join(_BRACKET.findall(self.s, start, end))
        if _balanced(brackets):
            return None
        stack, groups = self.stack, self.groups
        for k, ch in enumerate(brackets):
            if ch in _OPEN:
                stack.append((ch, start, k))
            elif not stack or stack[-1][0] != _CLOSE[ch]:
                return self.fault(self._place(start, k), f"'{ch}'", "closes a bracket it did not open")
            else:
                stack.pop()
                if groups and len(stack) < groups[-1].low:
                    groups[-1].low = len(stack)
        return None

    def _bracket(self, bracket: str, i: int, width: int) -> Problem | None:
        if bracket in _OPEN:
            self.stack.append((bracket, i, -1))
            return None
        if not self.stack or self.stack[-1][0] != _CLOSE[bracket]:
            return self.fault(i, f"'{self.s[i:i + width]}'", "closes a bracket it did not open")
        self.stack.pop()
        if self.groups:
            self.groups[-1].low = min(self.groups[-1].low, len(self.stack))
        return None

    def _place(self, start: int, k: int) -> int:
        """The offset of a bracket kept as (*start*, *k*): *start* itself where *k* is -1, else
        the *k*-th plain bracket (from 0) from *start* on."""
        return start if k < 0 else next(itertools.islice(_BRACKET.finditer(self.s, start), k, None)).start()

    def _comment(self, i: int) -> tuple[int, Problem | None]:
        """Past the /* comment at *i*, or why it cannot be."""
        end = self.s.find("*/", i + 2)
        if end < 0:
            return len(self.s), self.fault(i, "the comment opened", "is not closed (*/)")
        return end + 2, None

    def _blank(self, i: int) -> tuple[int, Problem | None]:
        """Past the spaces and /* */ comments at *i*, or why one cannot be read."""
        i = _BLANK.match(self.s, i).end()
        return self._comment(i) if self.s.startswith("/*", i) else (i, None)

    def _number(self, i: int) -> tuple[int, Problem | None]:
        end = _NUMBER.match(self.s, i).end()
        return end, self._foreign(i, end)

    def _name(self, i: int) -> tuple[int, Problem | None]:
        s, start = self.s, i
        i = _NAME.match(s, i).end()
        word = s[start:i]
        if word == "_Pragma" or "PRAGMA" in word:      # _Pragma, or a macro made of it (torch's _C10_PRAGMA_)
            return i, self.fault(start, word, "would change the code around the text")
        if word in _RAW_PREFIXES and s.startswith('"', i):
            return self._raw(start, i)
        return i, self._foreign(start, i)

    def _foreign(self, start: int, end: int) -> Problem | None:
        """The first character from *start* to *end*, a name's or a number's, that no name may
        hold (g++ reads it into the token and refuses it there)."""
        for m in _BEYOND_ASCII.finditer(self.s, start, end):
            if not _name_char(m.group()):
                return self.fault(m.start(), f"the character U+{ord(m.group()):04X}",
                                  "is not C++ outside a string or comment")
        return None

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

    def _literal(self, i: int, body: dict[str, re.Pattern] = _LITERAL_BODY) -> tuple[int, Problem | None]:
        """Past the character or string literal at *i* (its quote's *body* read as g++ reads it
        there), or why it is not closed."""
        s, quote = self.s, self.s[i]
        j = body[quote].match(s, i + 1).end()
        if j < len(s) and s[j] == quote:
            if quote == "'" and j == i + 1:
                return j, self.fault(i, "the character literal", "is empty ('')")
            return self._suffix(j + 1), None
        what = "string" if quote == '"' else "character"
        return j, self.fault(i, f"the {what} literal opened", f"is not closed on its line ({quote})")

    def _suffix(self, i: int) -> int:
        """Past the user-defined-literal suffix at *i*, if one is there."""
        suffix = _SUFFIX.match(self.s, i)
        return i if suffix is None else suffix.end()

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
        if bracket in _OPEN or bracket in _CLOSE:
            return i + width, self._bracket(bracket, i, width)
        if ch == ";" and self.expression and not self.stack:
            return i, self.fault(i, "';'", "would end the statement the expression is pasted into")
        if ch == "," and self.expression and not self.stack:
            return i, self.fault(i, "','", "outside brackets would make the expression two (a second declaration "
                                 "after an alloc's): write it in parentheses")
        if ch in "@`":
            return i, self.fault(i, f"the character U+{ord(ch):04X}", "is not C++ outside a string or comment")
        return i + width, None

    def _directive(self, i: int) -> tuple[int, Problem | None]:
        """A preprocessor line at *i*: a conditional group's line is kept track of (each branch
        must close the brackets it opens); any other directive is refused."""
        s, start = self.s, i
        i, why = self._blank(i + (1 if s[i] == "#" else 2))
        if why is not None:
            return i, why
        named = _NAME.match(s, i)
        name_end = named.end() if named else i
        name = s[i:name_end]
        kind = _CONDITIONAL.get(name)
        shown = f"#{name}" if name else "a # line"
        if self.expression:
            return i, self.fault(start, shown, "cannot stand in an expression")
        if kind is None and self.directives:
            # Read from the name on: g++ reads whatever token stands there (R"( opens a raw string).
            end, why = self._line_end(i, "include" if name in _INCLUDES else "line")
            if why is None and name == "define":        # a macro that opens or closes a bracket hides it
                inner = _Reader(s[name_end:end], False, False).problem()
                if inner is not None:
                    why = self.fault(start, "the macro #define", f"cannot be pasted as it is: {inner.message} "
                                     "(in its line)")
            return end, why
        if kind is None:
            return i, self.fault(start, shown, "would change the code around the text: only "
                                 "#if/#ifdef/#ifndef/#elif/#else/#endif groups may be pasted")
        if kind != "open":
            why = self._branch_end(start, name)
            if why is not None:
                return i, why
        end, why = self._line_end(name_end, "condition" if name in ("if", "elif") else "line")
        if why is None:
            why = self._condition(start, name, s[name_end:end])
        return end, why

    def _branch_end(self, start: int, name: str) -> Problem | None:
        """The branch before the #elif, #else or #endif at *start* ended, or why it cannot be."""
        if not self.groups:
            return self.fault(start, f"#{name}", "has no #if")
        group = self.groups[-1]
        if len(self.stack) != group.depth or group.low < group.depth:
            return self.fault(start, f"the branch before #{name}", "does not close the brackets it opens, "
                              "or closes brackets opened before its #if")
        if group.had_else and name != "endif":
            return self.fault(start, f"#{name}", "comes after the group's #else")
        group.low, group.had_else = group.depth, group.had_else or name == "else"
        if name == "endif":
            self.groups.pop()
            if self.groups:         # the closed group's branches are part of the enclosing branch
                self.groups[-1].low = min(self.groups[-1].low, group.low)
        return None

    def _condition(self, start: int, name: str, rest: str) -> Problem | None:
        """The conditional directive *name* at *start*, whose line's *rest* follows its name,
        taken into its group; its condition is checked where the preprocessor may read it: not
        in a group it skips, nor in an #elif after a branch it took, which it never reads."""
        if name == "endif":
            return None
        if name in ("if", "ifdef", "ifndef"):
            outer = self.groups[-1].read if self.groups else True
            self.groups.append(_Group(start, len(self.stack), len(self.stack), outer, False, False))
        group = self.groups[-1]
        if name == "else":
            holds = _not(group.taken)
        elif group.outer is False or group.taken is True:
            holds = False
        elif not rest.strip():
            return self.fault(start, f"#{name}", f"has no {'name' if 'def' in name else 'condition'}")
        else:
            verdict = condition_verdict(rest, "def" not in name)
            if verdict.problem is not None:
                return self.fault(start, f"the condition of #{name}", verdict.problem)
            holds = verdict.holds
        group.read = _and(group.outer, _and(_not(group.taken), holds))
        group.taken = _not(_and(_not(group.taken), _not(holds)))
        return None

    def _line_end(self, i: int, kind: str) -> tuple[int, Problem | None]:
        """Past the rest of a directive's line of *kind* ("line", "condition" or "include"): its
        comments, numbers, names and literals read whole, as elsewhere (a `'` in a number or a
        raw string opens no literal), its brackets not counted."""
        s, plain = self.s, _PLAIN_INCLUDE if kind == "include" else _PLAIN_LINE
        while True:
            if i >= self.careful_until:
                i = self._plain_end(i, plain)
            if i >= len(s) or s[i] == "\n":
                return i, None
            ch, two = s[i], s[i:i + 2]
            if two == "//":
                end = s.find("\n", i)
                return (len(s) if end < 0 else end), None
            if two == "/*":
                i, why = self._comment(i)
            elif kind == "include" and ch in "<\"'":
                i, why = self._header_name(i)
            elif ch in _DIGITS or (ch == "." and s[i + 1:i + 2] in _DIGITS):
                i, why = self._number(i)
            elif _NAME.match(s, i):
                i, why = self._line_name(i, kind)
            elif ch in "\"'":
                i, why = self._literal(i)
            else:
                i, why = i + 1, None
            if why is not None:
                return i, why

    def _line_name(self, i: int, kind: str) -> tuple[int, Problem | None]:
        """Past the name at *i* on a directive's line of *kind* (with the raw string it may
        open), or why it cannot stand there."""
        start = i
        i, why = self._name(i)
        if why is None and self.s.find("\n", start, i) >= 0:      # g++ ends a directive's raw string with its line
            why = self.fault(start, "the raw string", "in a directive is not closed on the directive's line")
        elif why is None and kind == "condition" and self.s[start:i] in _HAS_INCLUDE:
            why = self._has_include_operand(i)
        return i, why

    def _header_name(self, i: int) -> tuple[int, Problem | None]:
        """Past what an #include line holds at *i*: <...> (a header name), or a literal in which
        a backslash escapes nothing."""
        if self.s[i] == "<":
            angled = _ANGLED_HEADER.match(self.s, i)
            return (i + 1 if angled is None else angled.end()), None
        return self._literal(i, _HEADER_BODY)

    def _has_include_operand(self, i: int) -> Problem | None:
        """Why the operand of the __has_include before *i* cannot be pasted: g++ reads it as a
        header name where it computes the condition, and as tokens where it does not (a
        group skipped, an #elif after a branch taken), so a header name that the two read
        apart (a /* or // in <>, a quote, a backslash) is refused."""
        s = self.s
        i, why = self._blank(i)
        if why is None and s.startswith("(", i):
            i, why = self._blank(i + 1)
        if why is not None:
            return why
        if s.startswith("<", i):
            header = _ANGLED_HEADER.match(s, i)
            apart = header is not None and any(t in header.group() for t in ("/*", "//", "'", '"'))
        elif s.startswith('"', i):
            header = _HEADER_BODY['"'].match(s, i + 1)
            apart = s.startswith('"', header.end()) and "\\" in header.group()
        else:
            return None
        if not apart:
            return None
        return self.fault(i, "the header name", "holds /* or //, a quote or a backslash, which g++ reads as "
                          "part of the name where it computes the condition and otherwise as a comment or "
                          "literal: name the header without it")


def _balanced(brackets: str) -> bool:
    """Whether *brackets* close each one they open, by cancelling the innermost pairs a few times
    over: enough for code nested a few levels deep (deeper code is read a bracket at a time)."""
    for _ in range(8):
        inner = _PAIR.sub("", brackets)
        if not inner or len(inner) == len(brackets):
            return not inner
        brackets = inner
    return False


# A #if condition's tokens: a comment is a space; a number, a literal, a name, an operator of two
# characters or any other character is one token.
_COND_TOKEN = re.compile(rf"""\s+|/\*.*?\*/|//.*|(?P<t>{_NUMBER.pattern}|(?:u8|u|U|L)?'(?:\\.|[^'\\])*'"""
                         rf"""|(?:u8|u|U|L)?"(?:\\.|[^"\\])*"|{_NAME.pattern}|&&|\|\||<<|>>|<=|>=|==|!=|\S)""", re.S)
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
# The alternative tokens of C++ for the operators a condition may hold, read as those operators.
_ALTERNATIVE_OPERATORS = {"and": "&&", "or": "||", "not": "!", "bitand": "&", "bitor": "|", "xor": "^",
                          "compl": "~", "not_eq": "!="}
# Every name C++ makes an operator: none of them may be a macro's name.
_NAMED_OPERATORS = frozenset(_ALTERNATIVE_OPERATORS) | {"and_eq", "or_eq", "xor_eq"}
# C++ operators the preprocessor does not have: it reads each as a name (0), then refuses the ( after it.
_NOT_PREPROCESSOR = frozenset({"sizeof", "alignof", "decltype", "noexcept", "typeid"})


@dataclass(frozen=True)
class _Verdict:
    """What the preprocessor makes of a condition: why it refuses it (a phrase), or else
    whether it holds (None where a name decides)."""

    problem: str | None
    holds: bool | None = None


def condition_verdict(text: str, expression: bool) -> _Verdict:
    """What the preprocessor makes of *text*, the rest of a #if/#elif line (*expression*) or of
    an #ifdef/#ifndef line. A name followed by parentheses is a macro's call, whose arguments
    are the macro's business."""
    tokens: list[str] = []
    i = 0
    while i < len(text):
        m = _COND_TOKEN.match(text, i)
        if m.group("t"):
            tokens.append(m.group("t"))
        i = m.end()
    if expression:
        return _Condition([_ALTERNATIVE_OPERATORS.get(t, t) for t in tokens]).verdict()
    if not tokens or not _is_name(tokens[0]):
        return _Verdict("does not start with a macro name")
    if tokens[0] in _NAMED_OPERATORS:       # g++ only warns of tokens after the name
        return _Verdict(f"names {tokens[0]!r}, which is an operator in C++ and cannot be a macro name")
    return _Verdict(None)


def condition_problem(text: str, expression: bool) -> str | None:
    """Why the preprocessor refuses the condition *text* (see condition_verdict), or None."""
    return condition_verdict(text, expression).problem


def _and(a: bool | None, b: bool | None) -> bool | None:
    """a and b, where None is not known."""
    return False if a is False or b is False else None if a is None or b is None else True


def _not(a: bool | None) -> bool | None:
    return None if a is None else not a


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

    def verdict(self) -> _Verdict:
        try:
            value = self._expression()
        except ValueError as exc:
            return _Verdict(str(exc))
        token = self._peek()
        if token is not None:
            return _Verdict(f"has {token!r} where an operator or the line's end belongs")
        return _Verdict(None, None if value is None else value.value != 0)

    def _expect(self, token: str, why: str) -> None:
        """Past *token*, which must come next (else ValueError(*why*))."""
        if self._peek() != token:
            raise ValueError(why)
        self.i += 1

    def _expression(self) -> _Number | None:
        """Conditional expressions joined by commas, each computed: the last one's value."""
        value = self._conditional()
        while self._peek() == ",":
            self.i += 1
            value = self._conditional()
        return value

    def _conditional(self) -> _Number | None:
        self.depth += 1
        if self.depth > _MAX_NESTING:
            raise ValueError(f"is nested more than {_MAX_NESTING} deep")
        value = self._binary()
        if self._peek() == "?":
            self.i += 1
            yes = self._maybe_skipped(value is None or value.value == 0, self._expression)
            self._expect(":", "has a ? without its :")
            no = self._maybe_skipped(value is None or value.value != 0, self._conditional)
            value = _chosen(value, yes, no)
        self.depth -= 1
        return value

    def _maybe_skipped(self, unsure: bool, read) -> _Number | None:
        """The expression next, read by *read*, which the preprocessor may skip when *unsure*."""
        self.unsure += unsure
        value = read()
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
        elif left is not None and op in ("&&", "||") and (left.value != 0) == (op == "||"):
            values.append(_Number(int(op == "||")))     # the right operand is never computed
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
        elif token in ("true", "false"):        # C++ keywords, not names, in a condition too
            value = _Number(int(token == "true"))
        elif token.endswith("'"):         # before names: a literal's prefix is a name's start
            value = _character(token)
        elif _is_name(token) and not token.endswith('"'):
            self._name(token)
        elif token[0] in _DIGITS or token[0] == ".":
            if not _INTEGER.fullmatch(token):
                raise ValueError(f"has {token!r}, which is no integer constant (a condition computes in integers)")
            value = _integer(token)
        else:
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
        if token in _NAMED_OPERATORS:       # and_eq, or_eq, xor_eq: the assignments &=, |=, ^=
            raise ValueError(f"has {token!r}, an assignment operator, which the preprocessor does not take")
        operand = self.tokens[self.i + 1] if call and self.i + 1 < len(self.tokens) else None
        if token in _HAS_OPERATORS and not _has_operand(token, operand):
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


def _has_operand(operator_name: str, first: str | None) -> bool:
    """Whether *first*, the first token in the parentheses after *operator_name*, is one it
    takes: a name (a macro's, where a header name belongs), or a header name's start."""
    if first is None:
        return False
    return _is_name(first) or (operator_name in _HAS_INCLUDE and (first == "<" or first.startswith('"')))


def _integer(token: str) -> _Number:
    """The value of an integer literal. One too large for uintmax_t g++ cuts to its low bits
    (with a warning), of the type its suffix says; one beyond intmax_t is unsigned, as one
    with a u is."""
    written = token.rstrip("uUlLzZ")
    digits = written.replace("'", "")
    base = 16 if digits[:2] in ("0x", "0X") else 2 if digits[:2] in ("0b", "0B") else 8 if digits[0] == "0" else 10
    value = int(digits, base)
    suffixed = "u" in token[len(written):].lower()
    return _wrapped(value, suffixed or (not value >> _BITS and value >> (_BITS - 1) == 1))


# The simple escapes of a character literal, by the letter after the backslash.
_ESCAPES = {"'": 39, '"': 34, "?": 63, "\\": 92, "a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}
# A character of a literal's body: a simple, octal or hexadecimal escape (its letters or digits
# the group), a universal character name (or another escape), or a character.
_CHARACTER = re.compile(rf"\\([0-7]{{1,3}}|x[0-9A-Fa-f]+|['\"?\\abfnrtv])|{_UCN}|\\.|.", re.S)


def _character(token: str) -> _Number | None:
    """The value of a character literal where it is known: one character below 128 (the
    same whatever the signedness of char); u and U literals are unsigned. More than one
    character in a u8, u or U literal g++ refuses."""
    prefix, body = token[:token.index("'")], token[token.index("'") + 1:-1]
    chars = list(_CHARACTER.finditer(body))
    if len(chars) > 1 and prefix in ("u8", "u", "U"):
        raise ValueError(f"has a {prefix} character literal of more than one character, which the "
                         "preprocessor refuses for its type")
    if len(chars) > 1 or (chars[0].group().startswith("\\") and chars[0].group(1) is None):
        return None             # the compiler's own value: of several characters, or a universal character
    escape = chars[0].group(1)
    if escape is None:
        value = ord(chars[0].group())
    elif escape in _ESCAPES:
        value = _ESCAPES[escape]
    else:
        value = int(escape[1:], 16) if escape[0] == "x" else int(escape, 8)
    return _Number(value, prefix in ("u", "U")) if value < 128 else None


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


def _name_char(ch: str) -> bool:
    """A character of a name: ASCII letters, digits, _ and $ (as g++ reads them), and any other
    character Python takes in a name (each of them one that g++ takes in a C++17 name too)."""
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
