"""A DIPU vendor folder's CMake as the vendor file's build: section, and the
sources its CMakeLists.txt compiles. DIPU's vendor CMake is a handful of
shapes: `file(GLOB ...)` and `set(...)` source lists (with paths into a
sibling folder, as muxi's into cuda's), a subfolder picked by an SDK version
variable (camb's cnrt_${CNRT_MAJOR_VERSION}.x), find_package of a Find module
that reads an environment variable and a default root, and DIPU_VENDOR_LIB.

The files are read as CMake's parser reads them (bracket and line comments,
bracket, quoted and unquoted arguments, escapes, lists split at `;`), and
set(), list(APPEND) and file(GLOB) are followed in order, as CMake runs them.
A value that names a variable this file does not set (DIPU's CMake or the
SDK sets it) is kept as written. What reaches VENDOR_FILES or DIPU_VENDOR_LIB
that the import cannot carry is an error at its line; what it cannot read
otherwise it says, and the vendor checks."""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from deeplink_gen import inputfile
from deeplink_gen.errors import Diagnostic, Loc, UserError, display_path

_VAR = re.compile(r"\$\{(\w+)\}")
_ENV = re.compile(r"\$ENV\{(\w+)\}")
_REFERENCE = re.compile(r"\$(?:ENV|CACHE)?\{[^{}]*\}")      # one the import left as written
_ROOT_NAME = re.compile(r"^[A-Z][A-Z0-9_]*(?:ROOT|PATH|HOME)[A-Z0-9_]*$")
_FIND_CUDA_ROOTS = ("CUDA_TOOLKIT_ROOT_DIR", "CUDA_PATH")
_ABSOLUTE = re.compile(r"(?<![\w}$])(/(?:usr|opt)/[\w./-]*)")
_SOURCE_SUFFIXES = (".cpp", ".cc", ".cxx")
# The commands of a runtime CMakeLists.txt the import follows (besides set), and those that change
# nothing it carries: what DIPU's vendors use. Any other would be lost, and is refused.
_FOLLOWED = frozenset({("list", "APPEND"), ("file", "GLOB")})
_NO_EFFECT = frozenset({"message", "find_package", "find_library", "find_path", "find_program", "find_file",
                        "include", "cmake_minimum_required", "cmake_policy", "mark_as_advanced", "option", "if",
                        "elseif", "else", "endif"})
# The variable a command of an included file writes: set(X, unset(X, list(SUB X, file(GLOB X
_WRITES = re.compile(r"\b(?:set|unset|list\s*\(\s*\w+|file\s*\(\s*\w+|aux_source_directory\s*\(\s*\S+)"
                     r"\s*\(?\s*(\w+)", re.I)
_SWITCHES = frozenset({"add_definitions", "add_compile_definitions"})
# list() subcommands that only read (into a variable the import then knows nothing of, which is
# refused where the sources or libraries use it), or change no list's items, only their order or repeats.
_LIST_READS = frozenset({"LENGTH", "GET", "FIND", "JOIN", "SUBLIST", "SORT", "REMOVE_DUPLICATES"})
_LIBRARY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")       # build.toolkit.libraries holds these
# The text one file's arguments and values come to, four times the largest file read: a list
# appended to itself over and over grows with the square of the commands (in CMake too); past
# this the file is refused, not run for minutes.
_EXPANSION_BUDGET = 4 * inputfile.MAX_BYTES

# ---------------------------------------------------------------- the CMake language

# Between commands: blanks, line breaks and line comments (a bracket comment is read on its own).
_GAP = re.compile(r"(?:[ \t\r\n]+|#(?!\[=*\[)[^\n]*)*")
_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)[ \t\r]*")
# A command of plain unquoted words only, the most of any file, read in one step.
_PLAIN_COMMAND = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)[ \t\r]*\(([^()#"\\\[]*)\)')
_WORD = re.compile(r"[^ \t\r\n]+")
# What comes next inside a command's parentheses; an unquoted argument with the legacy forms
# CMake still reads: $(MAKE_VAR) and a"quoted part".
_TOKEN = re.compile(r"""(?P<gap>[ \t\r\n]+)|\[(?P<bracket>=*)\[|(?P<comment>\#)|(?P<paren>[()])
    |"(?P<quoted>[^"\\]*(?:\\.[^"\\]*)*)"
    |(?P<unquoted>(?:\$\([A-Za-z0-9_]*\)|[^ \t\r\n()\#"\\]|\\[^\n]
                   |"(?:\$\([A-Za-z0-9_]*\)|[^\r\n()\#"\\]|\\[^\n])*")+)""", re.X | re.S)
_BRACKET_OPEN = re.compile(r"\[(=*)\[")
_FLAT_REFERENCE = re.compile(r"\$\{([^${}\\]*)\}")
_REFERENCE_PIECE = re.compile(r"\\(.)|\$(?:ENV|CACHE)?\{|\}", re.S)
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", ";": "\\;", "\n": ""}    # `\;` stands for itself until a list splits
_UNESCAPED_SEMICOLON = re.compile(r"(?<!\\);")
_LIST_STRUCTURE = re.compile(r"\\;|[\[\];]")


@dataclass(frozen=True)
class Argument:
    kind: str           # "bracket", "quoted" or "unquoted"
    text: str           # as written, less its quotes or brackets
    line: int


@dataclass(frozen=True)
class Command:
    name: str           # lower case: CMake matches command names so
    args: tuple[Argument, ...]
    line: int


def _refusal(shown: str, line: int, message: str) -> UserError:
    return UserError([Diagnostic(Loc(shown, line, 1), "--runtime", message)])


class _Reader:
    """A position in a CMake file's text, and the line it is on."""

    def __init__(self, text: str, shown: str):
        self.text, self.shown, self.pos, self.line = text, shown, 0, 1

    def advance(self, end: int) -> None:
        self.line += self.text.count("\n", self.pos, end)
        self.pos = end

    def refuse(self, message: str, at: int | None = None) -> UserError:
        where = Loc.at(self.shown, self.text, self.pos if at is None else at)
        return UserError([Diagnostic(where, "--runtime", f"CMake cannot read this file: {message}")])

    def bracket(self, equals: str, start: int, what: str) -> str:
        """The content of the bracket argument or comment whose `[=*[` ends at *start*, less a
        newline right after it."""
        close = f"]{equals}]"
        end = self.text.find(close, start)
        if end < 0:
            raise self.refuse(f"the {what} opened here is never closed by `{close}`: close it")
        content = self.text[start:end]
        self.advance(end + len(close))
        return content[2:] if content.startswith("\r\n") else content[1:] if content.startswith("\n") else content

    def comment(self) -> bool:
        """Skips the comment at `#`; whether it was a bracket comment (code may not follow it on its line)."""
        opening = _BRACKET_OPEN.match(self.text, self.pos + 1)
        if opening is not None:
            self.bracket(opening.group(1), opening.end(), "bracket comment")
            return True
        end = self.text.find("\n", self.pos)
        self.advance(len(self.text) if end < 0 else end)
        return False

    def command(self, name: re.Match) -> Command:
        line, start = self.line, self.pos
        self.pos = name.end()
        if not self.text.startswith("(", self.pos):
            raise self.refuse(f"`{name.group(1)}` is not followed by `(` on its line: write the command's `(` "
                              "on the line of its name")
        self.pos += 1
        args: list[Argument] = []
        depth = 1
        while depth:
            token = _TOKEN.match(self.text, self.pos)
            if token is None:
                raise self.unreadable(name.group(1), start)
            kind = token.lastgroup
            if kind == "bracket":
                line_of = self.line
                args.append(Argument("bracket", self.bracket(token.group("bracket"), token.end(), "bracket argument"),
                                     line_of))
                continue
            if kind == "comment":
                self.comment()
                continue
            if kind == "paren":         # CMake passes the parentheses inside a command as arguments
                depth += 1 if token.group(0) == "(" else -1
                if depth:
                    args.append(Argument("unquoted", token.group(0), self.line))
            elif kind != "gap":
                args.append(Argument(kind, token.group(kind), self.line))
            self.advance(token.end())
        return Command(name.group(1).lower(), tuple(args), line)

    def unreadable(self, name: str, start: int) -> UserError:
        if self.pos >= len(self.text):
            return self.refuse(f"`{name}(` is never closed by `)`: close it", at=start)
        if self.text[self.pos] == '"':
            return self.refuse('the quoted argument opened here is never closed by `"`: close it')
        return self.refuse("a backslash ends the line inside an unquoted argument: quote the argument (a backslash "
                           "before a newline continues a quoted one), or remove the backslash")


def _plain_arguments(body: str, line: int) -> tuple[Argument, ...]:
    if "\n" not in body:
        return tuple(Argument("unquoted", word, line) for word in _WORD.findall(body))
    return tuple(Argument("unquoted", word, line + n) for n, part in enumerate(body.split("\n"))
                 for word in _WORD.findall(part))


def commands(text: str, shown: str) -> list[Command]:
    """The commands of a CMake file, read in one pass as CMake's parser reads it."""
    reader = _Reader(text, shown)
    nul = text.find("\0")
    if nul >= 0:
        raise reader.refuse("a NUL character: remove it", at=nul)
    out: list[Command] = []
    line_start = True
    while True:
        gap = _GAP.match(text, reader.pos)
        if gap.end() > reader.pos:
            line_start = line_start or "\n" in gap.group(0)
            reader.advance(gap.end())
        if reader.pos >= len(text):
            return out
        if text.startswith("#", reader.pos):
            reader.comment()            # a bracket comment: _GAP took the others
            line_start = False
            continue
        name = _NAME.match(text, reader.pos)
        if name is None:
            raise reader.refuse(f"`{text[reader.pos]}` where a command goes: remove it, or make it a comment with #")
        if not line_start:
            raise reader.refuse(f"`{name.group(1)}` follows other code on its line: put each command on a line "
                                "of its own")
        plain = _PLAIN_COMMAND.match(text, reader.pos)
        if plain is None:
            out.append(reader.command(name))
        else:
            out.append(Command(plain.group(1).lower(), _plain_arguments(plain.group(2), reader.line), reader.line))
            reader.advance(plain.end())
        line_start = False


def _read(path: Path) -> list[Command]:
    raw = inputfile.read(path, key="--runtime").decode("utf-8", errors="replace")
    return commands(raw, os.path.normpath(path))


def elements(value: str) -> list[str]:
    """The items of a CMake list, split as CMake splits one: at each `;` outside square
    brackets, `\\;` standing for `;`, empty items dropped."""
    if ";" not in value:
        return [value] if value else []
    if "[" not in value and "]" not in value:
        return [item.replace("\\;", ";") for item in _UNESCAPED_SEMICOLON.split(value) if item]
    items: list[str] = []
    item: list[str] = []
    nesting = pos = 0
    for m in _LIST_STRUCTURE.finditer(value):
        piece = m.group(0)
        if piece == "[" or piece == "]":
            nesting += 1 if piece == "[" else -1
        elif piece == "\\;":
            item += [value[pos:m.start()], ";"]
            pos = m.end()
        elif nesting == 0:
            items.append("".join(item) + value[pos:m.start()])
            item, pos = [], m.end()
    items.append("".join(item) + value[pos:])
    return [i for i in items if i]


# ---------------------------------------------------------------- following the commands

@dataclass
class _Scope:
    values: dict[str, str] = field(default_factory=dict)
    unknown: dict[str, str] = field(default_factory=dict)     # name -> the reference its value holds unresolved
    line: dict[str, int] = field(default_factory=dict)        # name -> the line that set it


@dataclass(frozen=True)
class Sources:
    files: tuple[Path, ...]                   # what DIPU compiles, resolved
    conditional: tuple[Path, ...]             # compiled only under a condition the import cannot know
    variant: str | None                       # the version-picked subfolder chosen
    variants: tuple[str, ...]                 # every subfolder the pattern matches
    variant_line: int


@dataclass(frozen=True)
class _Followed:
    sources: Sources
    libraries: tuple[tuple[str, int], ...]    # DIPU_VENDOR_LIB's items, each with the line that wrote it


class _Run:
    """The vendor CMakeLists.txt's commands run in order, as far as the import follows them:
    set(), list(APPEND) and file(GLOB) on the folder's variables, and the if() depth of each."""

    def __init__(self, folder: Path, chosen: str | None):
        self.folder, self.chosen, self.shown = folder, chosen, os.path.normpath(folder / "CMakeLists.txt")
        self.local = _Scope({"CMAKE_CURRENT_SOURCE_DIR": str(folder), "CMAKE_CURRENT_LIST_DIR": str(folder)})
        self.parent = _Scope()                # set(... PARENT_SCOPE): what DIPU's CMake sees
        # each item a list holds -> whether it came in under an if() (the first time it came in)
        self.introduced: dict[str, bool] = {}
        self.library_writes: list[tuple[int, int]] = []       # (line, if() depth) of each write of the libraries
        self.written: dict[str, int] = {}     # an item naming something (`$`) -> the line that first wrote it
        self.spent = 0
        self.variant: str | None = None
        self.variants: tuple[str, ...] = ()
        self.variant_line = 0

    def expand(self, arg: Argument) -> tuple[str, str | None]:
        """*arg*'s value with its escapes and variable references evaluated, in one pass as CMake
        does; a reference the import cannot resolve is kept as written, and returned too."""
        text = arg.text
        if "\\" not in text and "{" not in text:
            return text, None
        if "\\" not in text and "$ENV{" not in text and "$CACHE{" not in text:
            flat = _FLAT_REFERENCE.findall(text)
            if len(flat) == text.count("${"):       # no reference inside another
                return self.flat(text, flat)
        parts: list[list[str]] = [[]]
        opened: list[tuple[str, int]] = []      # each open reference: its `${`, `$ENV{` or `$CACHE{`, where it starts
        blind: list[bool] = []                  # whether it names one the import cannot resolve
        unresolved = None
        pos = 0
        for m in _REFERENCE_PIECE.finditer(text):
            parts[-1].append(text[pos:m.start()])
            pos = m.end()
            escaped, piece = m.group(1), m.group(0)
            if escaped is not None:
                parts[-1].append(self.escape(escaped, arg.line))
            elif piece != "}":
                opened.append((piece, m.start()))
                blind.append(False)
                parts.append([])
            elif not opened:
                parts[-1].append("}")
            else:
                (opener, start), name, unknowable = opened.pop(), "".join(parts.pop()), blind.pop()
                value = None if unknowable or opener != "${" else self.value(name)
                if value is not None:
                    parts[-1].append(value)
                elif blind:             # the reference around this one cannot be resolved either
                    blind[-1] = True
                else:
                    unresolved = unresolved or text[start:m.end()]
                    parts[-1].append(text[start:m.end()])
        if opened:
            raise _refusal(self.shown, arg.line, (
                f"CMake cannot read this file: the variable reference `{opened[-1][0]}` is never closed by `}}`: "
                "close it"))
        parts[-1].append(text[pos:])
        return "".join(parts[0]), unresolved

    def flat(self, text: str, names: list[str]) -> tuple[str, str | None]:
        unresolved = next((f"${{{name}}}" for name in names if self.value(name) is None), None)
        return _FLAT_REFERENCE.sub(self.substitute, text), unresolved

    def substitute(self, reference: re.Match) -> str:
        value = self.value(reference.group(1))
        return reference.group(0) if value is None else value

    def value(self, name: str) -> str | None:
        return None if name in self.local.unknown else self.local.values.get(name)

    def escape(self, escaped: str, line: int) -> str:
        if escaped.isascii() and escaped.isalnum() and escaped not in "tnr":
            raise _refusal(self.shown, line, (
                f"CMake cannot read this file: `\\{escaped}` is no escape sequence (CMake has \\t, \\n, \\r, \\; and "
                f"a backslash before a character other than a letter or digit): write `\\\\{escaped}` for a backslash"))
        return _ESCAPES.get(escaped, escaped)

    def arguments(self, command: Command) -> tuple[list[str], str | None]:
        """*command*'s arguments as CMake passes them: an unquoted one split into its list's items."""
        out: list[str] = []
        unresolved = None
        for arg in command.args:
            if arg.kind == "bracket":
                out.append(arg.text)
                continue
            value, missing = self.expand(arg)
            unresolved = unresolved or missing
            self.spend(value, command.line)
            items = [value] if arg.kind == "quoted" else elements(value)
            out += items
            if "$" in value:
                for item in items if arg.kind == "unquoted" else elements(value):
                    self.written.setdefault(item, arg.line)
        return out, unresolved

    def spend(self, value: str, line: int) -> None:
        self.spent += len(value)
        if self.spent > _EXPANSION_BUDGET:
            raise _refusal(self.shown, line, (
                f"as CMake runs this file, its values come to more than {_EXPANSION_BUDGET // 2**20} MiB of text "
                "here (a list appended to itself over and over): the import reads vendor CMake files of ordinary "
                "size; build the list once"))

    def assign(self, scope: _Scope, name: str, value: str | None, unresolved: str | None, line: int) -> None:
        self.spend(value or "", line)
        if value is None:
            scope.values.pop(name, None)
        else:
            scope.values[name] = value
        if unresolved is None:
            scope.unknown.pop(name, None)
        else:
            scope.unknown[name] = unresolved
        scope.line[name] = line

    def set(self, command: Command, args: list[str], unresolved: str | None, depth: int) -> None:
        name, rest, scope = args[0], args[1:], self.local
        if rest and rest[-1] == "PARENT_SCOPE":
            rest, scope = rest[:-1], self.parent
        elif "CACHE" in rest:
            rest = rest[:rest.index("CACHE")]
        value = ";".join(rest) if rest else None        # set(X) unsets X
        self.assign(scope, name, value, unresolved, command.line)
        self.introduce(elements(value or ""), depth)
        self.write_libraries(name, command.line, depth)

    def append(self, command: Command, args: list[str], unresolved: str | None, depth: int) -> None:
        """list(APPEND X a b); a variable not set yet is empty, as list() takes it."""
        name = args[1]
        before = self.local.values.get(name, "")
        value = ";".join(([before] if before else []) + args[2:])
        self.assign(self.local, name, value, self.local.unknown.get(name) or unresolved, command.line)
        self.introduce(elements(";".join(args[2:])), depth)
        self.write_libraries(name, command.line, depth)

    def introduce(self, items: list[str], depth: int, found: bool = False) -> None:
        """Note whether each of *items* comes in under an if(): the first time it comes in, or as a
        file a glob outside any if() found (a list copied into another keeps what its items were)."""
        for item in items:
            if item not in self.introduced or (found and not depth):
                self.introduced[item] = bool(depth)

    def write_libraries(self, name: str, line: int, depth: int) -> None:
        """An error where DIPU_VENDOR_LIB is written again and one of its writes is under an if():
        which one DIPU links is the build's choice, which the import cannot make (one write under
        an if(), as topsrider's under if(TOPSRT_FOUND), is the SDK's found libraries)."""
        if name != "DIPU_VENDOR_LIB":
            return
        self.library_writes.append((line, depth))
        if len(self.library_writes) > 1 and any(d for _, d in self.library_writes):
            first = self.library_writes[0][0]
            raise _refusal(self.shown, line, (
                f"DIPU_VENDOR_LIB is written here and at line {first}, under an if() the import cannot decide, so "
                "it cannot tell which libraries DIPU links: write them in one set() outside the if()"))

    def glob(self, command: Command, args: list[str], depth: int) -> None:
        name, rest, found = args[1], args[2:], []
        while rest:
            option, rest = rest[0], rest[1:]
            if option == "LIST_DIRECTORIES":
                rest = rest[1:]
            elif option == "RELATIVE":
                raise _refusal(self.shown, command.line, (
                    "file(GLOB ... RELATIVE) makes the names relative to another folder than DIPU's CMake reads "
                    "them from: the import takes the paths file(GLOB) gives without it; remove RELATIVE and its "
                    "folder"))
            elif option != "CONFIGURE_DEPENDS":
                found += self.matches(option, command.line)
        # each match as the folder's files are named (relative to it), so that a folder given as a
        # relative path is not joined to them twice
        shown = [p.relative_to(self.folder) if p.is_relative_to(self.folder) else p for p in found]
        self.assign(self.local, name, ";".join(str(p) for p in shown), None, command.line)
        self.introduce([str(p) for p in shown], depth, found=True)

    def matches(self, pattern: str, line: int) -> list[Path]:
        base = Path(pattern) if Path(pattern).is_absolute() else self.folder / pattern
        unresolved = _REFERENCE.search(pattern)
        if unresolved is None:
            return _glob_path(base)
        # A subfolder picked by a variable the SDK decides: each folder the pattern matches is a variant.
        subfolder = base.parent.relative_to(self.folder).parts if base.parent.is_relative_to(self.folder) else ()
        if len(subfolder) != 1 or not _VAR.search(subfolder[0]) or _REFERENCE.search(base.name):
            raise _refusal(self.shown, line, (
                f"file(GLOB) matches `{pattern}`, whose {unresolved.group(0)} this file does not set (DIPU's CMake or "
                "the SDK does), so the import cannot tell which files DIPU compiles: write the pattern without it, "
                "or with it only in the name of a version subfolder of the runtime folder (as camb's "
                "cnrt_${CNRT_MAJOR_VERSION}.x/*.cpp), whose every match the import offers as a --variant"))
        matches = [p for p in _glob(self.folder, _VAR.sub("*", subfolder[0])) if p.is_dir()]
        if not matches:
            return []
        self.variants = tuple(p.name for p in matches)
        self.variant_line = line
        self.variant = self.chosen if self.chosen in self.variants else _newest(self.variants)
        return _glob(self.folder / self.variant, base.name)

    def run(self, commands: list[Command]) -> None:
        depth = 0
        for command in commands:
            self.refuse_unread(command, depth)
            if command.name in ("if", "endif"):
                depth += 1 if command.name == "if" else -1
                if depth < 0:
                    raise _refusal(self.shown, command.line, "CMake cannot run this file: this endif() closes no "
                                                             "if(): remove it")
            elif command.name in ("set", "list", "file") and command.args:
                self.follow(command, depth)

    def refuse_unread(self, command: Command, depth: int) -> None:
        """An error at a command whose effect on the build the import would lose: one that is
        neither followed (set, list(APPEND), file(GLOB)) nor without effect on what is compiled
        and linked (a message, a find, an if). A define under an if() is an SDK's or an option's
        switch, which the import resolves in the code as for the newest SDK, with a warning."""
        name = command.name
        sub = command.args[0].text if command.args else ""
        if name == "include":
            self.refuse_include(command, sub)
        if name in _NO_EFFECT or name == "set" or (name, sub) in _FOLLOWED or (depth and name in _SWITCHES):
            return
        if name == "list" and sub in _LIST_READS:
            return
        shown = f"{command.name}({sub})" if name in ("list", "file", "string") and sub else f"{command.name}()"
        hint = (" write file(GLOB SRC_FILES *.cpp) for its sources" if name == "aux_source_directory" else
                " remove it, and write what it does to the sources or libraries with set(), list(APPEND) or "
                "file(GLOB)")
        raise _refusal(self.shown, command.line, (
            f"{shown} is not a command the import follows: the rendered CMakeLists.txt is made from the vendor "
            "file's build: section (its sources, hand-written files and libraries), so what it does to the build "
            f"would be lost;{hint}"))

    def refuse_include(self, command: Command, name: str) -> None:
        """An error at an include() of a file of the folder that sets what the import reads from this
        one (the import does not follow include()), or of one that is not there (CMake stops)."""
        written = re.sub(r"^\$\{CMAKE_CURRENT_(?:SOURCE|LIST)_DIR\}/", "", name)
        if not (written.endswith(".cmake") or "/" in written) or _REFERENCE.search(written):
            return          # a module of CMake's module path (FindAscendToolKit), found where the SDK says
        path = Path(written) if Path(written).is_absolute() else self.folder / written
        optional = any(a.text == "OPTIONAL" for a in command.args[1:])
        if not path.is_file():
            if not optional:
                raise _refusal(self.shown, command.line, (
                    f"include({name}) names no file of {display_path(str(self.folder))}, so CMake would stop here: "
                    "add the file, or remove the include()"))
            return
        text = inputfile.read(path, key="--runtime").decode("utf-8", "replace")
        names = {"VENDOR_FILES", "DIPU_VENDOR_LIB", *self.local.values, *self.parent.values}
        changed = sorted(names & set(_WRITES.findall(text)))
        if changed:
            raise _refusal(self.shown, command.line, (
                f"include({name}) runs a file that changes {', '.join(changed)}, which decides what DIPU compiles "
                "or links, and the import reads that from CMakeLists.txt alone (it does not follow include()): "
                "set the sources and libraries in CMakeLists.txt"))

    def follow(self, command: Command, depth: int) -> None:
        args, unresolved = self.arguments(command)
        if command.name == "set" and args:
            self.set(command, args, unresolved, depth)
        elif command.name == "list" and len(args) > 1 and args[0] == "APPEND":
            self.append(command, args, unresolved, depth)
        elif command.name == "file" and len(args) > 1 and args[0] == "GLOB":
            self.glob(command, args, depth)

    def output(self, name: str) -> tuple[list[str], int] | None:
        """The items of a variable DIPU's CMake reads, and the line that set it: set with
        PARENT_SCOPE, as DIPU needs it, else as this file left it."""
        for scope in (self.parent, self.local):
            if name in scope.values:
                return elements(scope.values[name]), scope.line[name]
        return None

    def compiled(self) -> list[str]:
        """The source files VENDOR_FILES names, as written; an error at the line that wrote one
        the import cannot tell."""
        listed = self.output("VENDOR_FILES")
        if listed is None:          # every source list the file sets
            return [item for name, value in self.local.values.items() if name not in self.local.unknown
                    for item in elements(value) if item.endswith(_SOURCE_SUFFIXES)]
        items, line = listed
        carried: dict[str, str] = {}        # the name an outside source is carried under -> that source
        for item in items:
            self.refuse_source(item, self.written.get(item, line))
            self.refuse_same_name(item, self.written.get(item, line), carried)
        return [item for item in items if item.endswith(_SOURCE_SUFFIXES) and not _REFERENCE.search(item)]

    def refuse_same_name(self, item: str, line: int, carried: dict[str, str]) -> None:
        """An error at a source outside the folder (muxi's are cuda's) whose name another source
        carried into the vendor's folder has too: the import carries it there under its name, so
        one would replace the other."""
        if _REFERENCE.search(item) or "$<" in item or not item.endswith(_SOURCE_SUFFIXES):
            return
        place = Path(os.path.abspath(item if os.path.isabs(item) else self.folder / item))
        if place.is_relative_to(os.path.abspath(self.folder)):
            return
        other = carried.get(place.name) or (place.name if (self.folder / place.name).exists() else None)
        if other is not None and other != item:
            raise _refusal(self.shown, line, (
                f"VENDOR_FILES names `{item}`, outside the runtime folder, which the import carries into the "
                f"vendor's folder as {place.name}, the name of `{other}` too, so one would replace the other: "
                "rename one of them"))
        carried[place.name] = item

    def refuse_source(self, item: str, line: int) -> None:
        if "$<" in item:
            raise _refusal(self.shown, line, (
                f"VENDOR_FILES holds the generator expression `{item}`, which CMake evaluates only when it writes the "
                "build (for one configuration or target), so the import cannot tell which files DIPU compiles: "
                "list the files without it"))
        ref = _VAR.fullmatch(item)
        if ref is not None and ref.group(1) in self.local.unknown:
            name = ref.group(1)
            raise _refusal(self.shown, self.local.line[name], (
                f"{name}, which VENDOR_FILES names, is set here from {self.local.unknown[name]}, which this file "
                "does not set (DIPU's CMake or the SDK does), so the import cannot tell which files DIPU compiles: "
                f"set {name} from what this file sets"))
        unresolved = _REFERENCE.search(item)
        if ref is None and unresolved is not None and item.endswith(_SOURCE_SUFFIXES):
            raise _refusal(self.shown, line, (
                f"VENDOR_FILES names `{item}`, whose {unresolved.group(0)} this file does not set (DIPU's CMake "
                "or the SDK does), so the import cannot tell which file DIPU compiles: write the path from "
                "${CMAKE_CURRENT_SOURCE_DIR}"))

    def followed(self) -> _Followed:
        compiled = list(dict.fromkeys(self.folder / item for item in self.compiled()))
        conditional = [self.folder / item for item, under_if in self.introduced.items()
                       if under_if and item.endswith(_SOURCE_SUFFIXES) and not _REFERENCE.search(item)]
        libraries = self.output("DIPU_VENDOR_LIB")
        return _Followed(
            Sources(tuple(p for p in compiled if p not in conditional), tuple(conditional), self.variant,
                    self.variants, self.variant_line),
            tuple((item, self.written.get(item, libraries[1])) for item in libraries[0]) if libraries else ())


def _follow(folder: Path, cmake: list[Command], chosen: str | None) -> _Followed:
    run = _Run(folder, chosen)
    run.run(cmake)
    return run.followed()


def sources(folder: Path, chosen: str | None) -> Sources:
    """The sources the vendor folder's CMakeLists.txt compiles."""
    cmake = folder / "CMakeLists.txt"
    if not os.path.lexists(cmake):        # a folder or a FIFO in its place is an error where it is read
        return Sources(tuple(sorted(folder.glob("*.cpp"))), (), None, (), 0)
    return _follow(folder, _read(cmake), chosen).sources


def _glob(folder: Path, pattern: str) -> list[Path]:
    """The entries of *folder* whose names match *pattern*, as file(GLOB) matches the last part of
    a path (pathlib's glob reads `**` otherwise, and refuses it inside a name)."""
    pattern = pattern.replace("[^", "[!")       # CMake's negated set, which fnmatch writes [!...]
    try:
        return sorted(p for p in folder.iterdir() if fnmatch.fnmatchcase(p.name, pattern))
    except OSError:
        return []


def _glob_path(pattern: Path) -> list[Path]:
    """The paths *pattern* matches as file(GLOB) matches them: a wildcard in any part, never across a '/'."""
    found = [Path(pattern.anchor)] if pattern.is_absolute() else [Path()]
    parts = pattern.parts[1:] if pattern.is_absolute() else pattern.parts
    for part in parts:
        if not glob.has_magic(part):
            found = [p / part for p in found if os.path.lexists(p / part)]
        else:
            found = [m for p in found if p.is_dir() for m in _glob(p, part)]
    return sorted(found)


def _newest(variants: tuple[str, ...]) -> str:
    def key(name: str):
        return [int(x) for x in re.findall(r"\d+", name)] or [0]
    return max(variants, key=key)


# ---------------------------------------------------------------- build.toolkit

def _found_libraries(parsed: list[list[Command]]) -> dict[str, str]:
    """find_library(VAR [NAMES] name ...): VAR -> the library's name."""
    found = {}
    for command in (c for cmds in parsed for c in cmds if c.name == "find_library" and len(c.args) > 1):
        names = command.args[1:]
        if names[0].text == "NAMES":
            names = names[1:]
        if names and re.fullmatch(r"\w+", command.args[0].text) and re.fullmatch(r"[\w.+-]+", names[0].text):
            found[command.args[0].text] = names[0].text
    return found


def _libraries(shown: str, items: tuple[tuple[str, int], ...], found: dict[str, str]) -> tuple[list[str], list[str]]:
    """build.toolkit.libraries from DIPU_VENDOR_LIB's items, and what the import could not resolve."""
    libraries, notes = [], []
    for item, line in items:
        ref = _VAR.fullmatch(item)
        if ref is not None and ref.group(1) == "DIPU_VENDOR_LIB":       # what DIPU's CMake links already
            continue
        if ref is not None and ref.group(1) in found:
            libraries.append(found[ref.group(1)])
        elif ref is not None and ref.group(1) == "CUDA_LIBRARIES":
            libraries.append("cudart")         # FindCUDA's CUDA_LIBRARIES: the CUDA runtime
        elif ref is not None:
            notes.append(f"DIPU_VENDOR_LIB names ${{{ref.group(1)}}}, which the import cannot resolve: add it to build.link")
        elif "$<" in item:
            raise _refusal(shown, line, (
                f"DIPU_VENDOR_LIB holds the generator expression `{item}`, which CMake evaluates only when it writes "
                "the build (for one configuration or target), so the import cannot tell which library DIPU links: "
                "name the library without it, or leave it out and add the library to build.link of the imported "
                "vendor file"))
        elif not _LIBRARY.fullmatch(item):
            raise _refusal(shown, line, (
                f"DIPU_VENDOR_LIB names `{item}`, which is no library name (letters, digits and _ . + -, such as "
                "nccl for libnccl.so), the only form the vendor file's build.toolkit.libraries holds: name the "
                "library, or leave it out and add it to build.link of the imported vendor file"))
        else:
            libraries.append(item)
    return libraries, notes


def _roots(parsed: list[list[Command]]) -> list[str]:
    """The variables naming the SDK's root: FindCUDA's, and those named *_ROOT*, *_PATH* or *_HOME*."""
    roots: list[str] = []
    if any(c.name == "find_package" and c.args and c.args[0].text == "CUDA" for cmds in parsed for c in cmds):
        roots += list(_FIND_CUDA_ROOTS)         # CMake's FindCUDA reads these
    # a bracket argument names no variable
    references = "\n".join(a.text for cmds in parsed for c in cmds for a in c.args if a.kind != "bracket")
    for name in _ENV.findall(references) + _VAR.findall(references):
        if _ROOT_NAME.match(name) and not name.startswith("CMAKE_") and name not in roots:
            roots.append(name)
    return roots


def _default_roots(parsed: list[list[Command]], roots: list[str]) -> list[str]:
    """The install roots: the absolute paths named, less a trailing include/, lib/ or bin/ part."""
    text = "\n".join(a.text for cmds in parsed for c in cmds for a in c.args)
    defaults = list(dict.fromkeys(re.sub(r"/(include|lib|lib64|bin)(/.*)?$", "", p.rstrip("/"))
                                  for p in _ABSOLUTE.findall(text)))
    defaults = [p for p in defaults if p not in ("/usr", "/usr/local", "/opt")]
    if "CUDA_TOOLKIT_ROOT_DIR" in roots and "/usr/local/cuda" not in defaults:
        defaults.insert(0, "/usr/local/cuda")
    return defaults


def toolkit(vendor: str, folder: Path, headers: list[str]) -> tuple[dict, list[str]]:
    """build.toolkit from the folder's CMake and Find modules, and what the import
    could not read from them (for the report)."""
    cmake = folder / "CMakeLists.txt"
    files = [p for p in [cmake, *sorted((folder / "cmake").glob("Find*.cmake"))] if p.is_file()]
    parsed = [_read(p) for p in files]
    roots = _roots(parsed)
    defaults = _default_roots(parsed, roots)
    items = _follow(folder, parsed[0], None).libraries if cmake in files else ()
    libraries, notes = _libraries(os.path.normpath(cmake), items, _found_libraries(parsed))
    entry: dict = {"name": vendor.capitalize() + "Sdk"}
    if roots:
        entry["root_vars"] = roots
    else:
        notes.append("no root variable found in the vendor CMake: build.toolkit.root_vars is empty")
    if defaults:
        entry["default_roots"] = defaults
    entry["include_suffixes"] = ["include"]
    entry["lib_suffixes"] = ["lib64", "lib"]
    probes = [h for h in headers if "." in h][:2]
    if not probes:
        notes.append("vendorapi.h includes no SDK header: build.toolkit.headers names none to probe")
    entry["headers"] = probes or ["stdio.h"]
    if libraries:
        entry["libraries"] = list(dict.fromkeys(libraries))
    return entry, notes
