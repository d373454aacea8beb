"""Where a YAML syntax error really is, and what to do about it.

libyaml names the token it choked on, which for an indentation mistake is
often the line after the mistake, in words ("mapping values are not allowed
in this context", "did not find expected key") that do not say what is
wrong. ``explain`` looks at the lines around that token and returns the line,
column and a plain message for the common mistakes: a key indented more or
less than its neighbours, a list item out of line with the one above, a tab
used for indentation, an unquoted ': ' inside a value, a line that lacks the
': ' of a key. Anything else keeps libyaml's own words and position."""

from __future__ import annotations

import re

# A pasted line can be megabytes long, so every pattern here runs in time linear in its line:
# none may try a later start, or a split of one run of characters between two repetitions,
# after the first fails (`\s+#` tried at each blank of a long run is quadratic).
# The list dashes that begin a line, and the key after them: a quoted string, or plain text
# running to the first ': ' that no '#' precedes.
_DASHES = re.compile(r"(?:-\s+)*")
_QUOTED_KEY = re.compile(r"""(?:"[^"]*"|'[^']*'):(?=\s|$)""")
_PLAIN_KEY = re.compile(r"""[^\s#'"{\[][^#]*?:(?=\s|$)""")
_HASH = re.compile(r"\s#")
# Text quoted in a message: a line's first characters.
_SHOWN = 200


def _key_end(body: str) -> int | None:
    """Where the key of the `key: value` line *body* (dashes first, if any) ends, just past its
    ':'; None when *body* has no key. Dashes are read as list dashes; failing that, the whole
    line as a plain key (`- {a: b}` has the key `- {a`)."""
    start = _DASHES.match(body).end()
    found = _QUOTED_KEY.match(body, start) or _PLAIN_KEY.match(body, start)
    if found is None and start > 0:
        found = _PLAIN_KEY.match(body)
    return found.end() if found is not None else None


def _uncommented(line: str) -> str:
    """*line* without a trailing comment: from the blanks before the first '#' that follows
    a blank and no quote follows."""
    quote = max(line.rfind('"'), line.rfind("'"))
    found = _HASH.search(line, quote + 1)
    return line if found is None else line[:found.start()].rstrip()


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _content(lines: list[str], number: int) -> bool:
    stripped = lines[number - 1].strip()
    return bool(stripped) and not stripped.startswith("#")


def _previous(lines: list[str], number: int) -> int | None:
    """The nearest line above *number* (1-based) with content, not a comment."""
    for n in range(number - 1, 0, -1):
        if _content(lines, n):
            return n
    return None


def _next(lines: list[str], number: int) -> int | None:
    for n in range(number + 1, len(lines) + 1):
        if _content(lines, n):
            return n
    return None


def _text(lines: list[str], number: int) -> str:
    """Line *number* without its indentation and its trailing comment."""
    return _uncommented(lines[number - 1]).strip()


def _has_value(line: str) -> bool:
    """A `key: value` line (its key cannot hold nested keys) or a list item with a scalar."""
    body = line.strip()
    if body.startswith("- ") and _key_end(body[2:].lstrip()) is None:
        return True
    end = _key_end(body)
    if end is None:
        return False
    rest = body[end:].split(" #")[0].strip()
    return bool(rest) and rest not in ("|", ">", "|-", ">-", "|+", ">+") and not rest.startswith("&")


def _open_levels(lines: list[str], number: int) -> list[tuple[int, int]]:
    """(indentation, line) of the lines that enclose line *number*'s previous
    content line: that line, then each nearest line above with less indentation."""
    out = []
    n = _previous(lines, number)
    while n is not None:
        width = _indent(lines[n - 1])
        if not out or width < out[-1][0]:
            out.append((width, n))
            if width == 0:
                break
        n = _previous(lines, n)
    return out


def explain(text: str, problem: str, line: int, col: int,
            context_line: int | None = None) -> tuple[int, int, str] | None:
    """(line, column, message) for a syntax error libyaml reports as *problem*
    at *line*:*col* (1-based; *context_line*: where the construct it was
    reading began), or None to keep libyaml's own report."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return None
    here = lines[line - 1]
    if "tab" in problem or "'\\t'" in problem or (0 < col <= len(here) and here[col - 1] == "\t"):
        tab = next((n for n in range(line, 0, -1) if "\t" in lines[n - 1][:_indent(lines[n - 1]) + 1]), line)
        return tab, _indent(lines[tab - 1]) + 1, "tabs are not allowed for indentation; indent with spaces"
    if "could not find expected ':'" in problem and context_line:
        start = context_line
        return start, _indent(lines[start - 1]) + 1, _no_colon(_text(lines, start))
    if "mapping values are not allowed" in problem:
        return _mapping_value(lines, line, col)
    if "did not find expected" in problem or "block end" in problem or "block mapping" in problem:
        # Only a token that begins its line can be out of line: one after other text on its line
        # (a stray '}', a word after a quoted string) is the mistake, where libyaml points.
        return _block(lines, line) if col == _indent(here) + 1 else None
    return None


def _mapping_value(lines: list[str], line: int, col: int) -> tuple[int, int, str] | None:
    here = lines[line - 1]
    end = _key_end(here.strip())
    if end is not None and col > _indent(here) + end:
        # A ': ' after the key's own: the value holds it.
        key = _shown(here.strip()[:end - 1])
        value = _shown(here.strip()[end:].split(" #")[0].strip())
        return line, col, (f"a value containing ': ' must be quoted: {key}: \"{value}\""
                           if '"' not in value else f"a value containing ': ' must be quoted: {key}: '{value}'")
    above = _previous(lines, line)
    if above is not None and _indent(here) > _indent(lines[above - 1]) and _has_value(lines[above - 1]):
        odd = _dedented(lines, above, line)
        if odd is not None:
            return odd
        return line, _indent(here) + 1, (
            f"this line is indented more than the key above it ('{_shown(_text(lines, above))}' at line {above}: "
            f"{_spaces(_indent(lines[above - 1]))}; this one: {_spaces(_indent(here))}); "
            "a key with a value cannot hold keys")
    return None


def _block(lines: list[str], line: int) -> tuple[int, int, str] | None:
    here = lines[line - 1]
    above = _previous(lines, line)
    if not here.strip() or above is None:
        return None
    width, above_width = _indent(here), _indent(lines[above - 1])
    item = here.strip().startswith("- ") and _text(lines, above).startswith("- ")
    what = "list item" if item else "line"
    if width > above_width:
        odd = None if item else _dedented(lines, above, line)
        if odd is not None:
            return odd
        return line, width + 1, (
            f"this {what} is indented more than the {'item' if item else 'key'} above it "
            f"('{_shown(_text(lines, above))}' at line {above}: {_spaces(above_width)}; this one: {_spaces(width)})")
    if width == above_width:
        bare = _text(lines, above)
        if _key_end(bare) is None and not bare.startswith(("-", "{", "[", '"', "'", "|", ">")):
            return above, above_width + 1, _no_colon(bare)
        return None
    levels = _open_levels(lines, line)
    parent = next(((w, n) for w, n in levels if w < width), None)
    first = _next(lines, parent[1]) if parent is not None else None
    if first is not None and first < line and _indent(lines[first - 1]) > width:
        # The first line under the parent set a deeper indentation than this one. When this one
        # is the file's usual step from the parent (or the lines after it agree with it), the
        # first line is the odd one out.
        following = _next(lines, line)
        agree = following is not None and _indent(lines[following - 1]) == width
        if agree or width - parent[0] == _usual_step(lines):
            return first, _indent(lines[first - 1]) + 1, (
                f"this {what} is indented more than the {what}s after it ({_spaces(_indent(lines[first - 1]))}; "
                f"'{_shown(_text(lines, line))}' at line {line}: {_spaces(width)})")
    if item:
        return line, width + 1, (
            f"this list item is indented less than the item above it "
            f"(line {above}: {_spaces(above_width)}; this one: {_spaces(width)})")
    if width in [w for w, _ in levels]:
        return None
    closest = ", ".join(f"'{_shown(_text(lines, n))}' at line {n}: {_spaces(w)}" for w, n in levels[:2])
    return line, width + 1, (
        f"this line ({_spaces(width)}) is indented less than the key above it but lines up with no key "
        f"above it ({closest})")


def _dedented(lines: list[str], above: int, line: int) -> tuple[int, int, str] | None:
    """Line *above* when it is indented less than both the line before it and line *line* after
    it, which line up: most likely *above* slipped left (else *line* slipped right; both named)."""
    before = _previous(lines, above)
    width = _indent(lines[line - 1])
    if before is None or _indent(lines[above - 1]) >= width:
        return None
    if _indent(lines[before - 1]) == _indent(lines[above - 1]) and _opens(lines[before - 1]):
        # `dtypes:` then `supported: [...]` at its column, then `convert:` indented: the key
        # left with nothing under it shows where *above* belonged.
        return above, _indent(lines[above - 1]) + 1, (
            f"this line ({_spaces(_indent(lines[above - 1]))}) is indented no more than "
            f"'{_shown(_text(lines, before))}' at line {before}, which is left with nothing under it, while line {line} "
            f"after it has {_spaces(width)}; indent it like line {line}")
    if _indent(lines[before - 1]) != width:
        return None
    return above, _indent(lines[above - 1]) + 1, (
        f"this line ({_spaces(_indent(lines[above - 1]))}) is indented less than the lines around it "
        f"(lines {before} and {line}: {_spaces(width)}); indent it like them, or, if it begins a new "
        f"section, indent line {line} under it")


def _opens(line: str) -> bool:
    """A `key:` line with nothing after it: what follows, indented, is its value."""
    body = _uncommented(line).strip()
    return _key_end(body) is not None and not body.startswith("- ") and body.endswith(":")


def _no_colon(text: str) -> str:
    return f"'{_shown(text)}' is neither 'key: value' nor a list item; a key needs ': ' after it"


def _spaces(n: int) -> str:
    return f"{n} space{'' if n == 1 else 's'}"


def _usual_step(lines: list[str]) -> int:
    """The most common indentation step between a line and the line it nests under."""
    steps: dict[int, int] = {}
    widths = [_indent(s) for s in lines if s.strip() and not s.strip().startswith("#")]
    for before, after in zip(widths, widths[1:]):
        if after > before:
            steps[after - before] = steps.get(after - before, 0) + 1
    return max(steps, key=lambda s: (steps[s], -s)) if steps else 2
