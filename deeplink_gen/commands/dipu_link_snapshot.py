"""`deeplink-gen dipu-link-snapshot`: record DIPU core's link contract with
the kernels file from the object files of a DIPU build, read with nm.

DIPU core is every object of the build but the kernels file's
(AutoGenedKernels*) and the vendor folder's (a `vendor` directory) and
third-party code. Provided: every global symbol core objects define.
Expected: the dipu::native functions core objects leave undefined and no core
object defines, and the dipu_* functions core headers declare that no core
object defines. An optimizing build may drop a call that only sits on a path
it proves dead, so each such declaration is also taken by address in a probe
compiled with the build's own flags (compile_commands.json): its undefined
symbol is the declaration's exact mangled name."""

from __future__ import annotations

import gzip
import json
import re
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from deeplink_gen import inputfile, jsonfile
from deeplink_gen.errors import Diagnostic, Loc, UserError, display_path, excerpt
from deeplink_gen.commands import snapshot_out
from deeplink_gen.interfaces import dipu_link

_SKIPPED_DIRS = {"vendor", "third_party"}


def core_objects(build: Path) -> list[Path]:
    objects = []
    for path in sorted(build.rglob("*.o")):
        parts = set(path.relative_to(build).parts[:-1])
        if parts & _SKIPPED_DIRS or path.name.startswith("AutoGenedKernels"):
            continue
        objects.append(path)
    return objects


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise UserError([Diagnostic(None, None, f"{name} is not on PATH (binutils)")])
    return found


def symbols(objects: list[Path], *, local: bool = False) -> tuple[set[str], set[str]]:
    """(symbols defined, global unless *local*; symbols left undefined) by *objects*, mangled."""
    defined, undefined = set(), set()
    scope = [] if local else ["-g"]
    for start in range(0, len(objects), 200):
        batch = objects[start:start + 200]
        done = subprocess.run([_tool("nm"), "-P", *scope, "--", *map(str, batch)],
                              capture_output=True, text=True, errors="replace")
        if done.returncode:     # a file that is no object file: nm's first complaint names it
            first = (done.stderr.strip().splitlines() or [f"nm: exit status {done.returncode}"])[0]
            named = [str(o) for o in batch if str(o) in first]
            raise UserError([Diagnostic(Loc(max(named, key=len)) if named else None, None,
                                        f"nm cannot read it: {excerpt(first.split(': ', 1)[-1], 200)}")])
        for line in done.stdout.splitlines():
            fields = line.split()
            if len(fields) < 2 or line.endswith(":"):
                continue
            name, kind = fields[0], fields[1]
            (undefined if kind in ("U", "w", "v") else defined).add(name)
    return defined, undefined - defined


_DECLARED = re.compile(r"\b(dipu_\w+)\s*\([^;{}]*\)\s*;")


def declared_in_headers(csrc: Path) -> dict[str, list[str]]:
    """dipu_* function names declared (not defined) in DIPU core's headers, by header (relative to csrc/..)."""
    found: dict[str, list[str]] = {}
    for path in sorted(csrc.rglob("*.h*")):
        if "vendor" in path.relative_to(csrc).parts or path.suffix not in (".h", ".hpp"):
            continue
        # Read as an input (a regular file of bounded size): a FIFO named *.h would block the read.
        names = sorted(set(_DECLARED.findall(inputfile.read(path, key="--source").decode("utf-8", "replace"))))
        if names:
            found[path.relative_to(csrc.parent).as_posix()] = names
    return found


@dataclass(frozen=True)
class Core:
    """The compiler command of one DIPU core source, without -c/-o, its directory, and where
    compile_commands.json gives it (errors of the probes compiled with it name that entry)."""

    command: list[str]
    directory: str
    loc: Loc
    key: tuple

    def compile(self, *args: str, check: bool = False) -> subprocess.CompletedProcess:
        """The command run with *args* added; with *check*, a UserError when it fails."""
        try:
            done = subprocess.run([*self.command, *args], cwd=self.directory, capture_output=True, text=True,
                                  errors="replace")
        except (OSError, ValueError) as exc:        # no such compiler or directory; a NUL in a word
            raise self.fail(f"cannot run {excerpt(self.command[0])} in {excerpt(self.directory)}: "
                            f"{getattr(exc, 'strerror', None) or exc}") from None
        if check and done.returncode:
            lines = done.stderr.splitlines() or [f"exit status {done.returncode}"]
            raise self.fail(f"DIPU's kernel headers do not compile with this command: "
                            f"{excerpt(next((l for l in lines if 'error' in l), lines[0]), 200)}")
        return done

    def fail(self, message: str) -> UserError:
        return UserError([Diagnostic(self.loc, self.key, message)])


def _core_command(build: Path) -> Core:
    """The command of the first DIPU core source compile_commands.json names."""
    path = build / "compile_commands.json"
    if not path.exists():
        raise UserError([Diagnostic(None, None, f"{display_path(str(build))}: no compile_commands.json "
                                                "(configure DIPU with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)")])
    loc = Loc(str(path))

    def bad(key: tuple, message: str) -> UserError:
        return UserError([Diagnostic(loc, key, message)])

    entries = jsonfile.read(path, "--build")
    if not isinstance(entries, list):
        raise bad((), "not a list of compile commands")
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or not isinstance(e.get("file"), str) or not isinstance(e.get("directory"), str):
            raise bad((i,), "not a compile command: an object with the strings file and directory")
        file = Path(e["file"])
        if "csrc_dipu" in file.parts and "vendor" not in file.parts and not file.name.startswith("AutoGenedKernels"):
            # The command as a list of words ("arguments") or as one shell-quoted string ("command").
            arguments, command = e.get("arguments"), e.get("command")
            if isinstance(arguments, list) and all(isinstance(w, str) for w in arguments):
                key, words = (i, "arguments"), arguments
            elif isinstance(command, str):
                key = (i, "command")
                try:
                    words = shlex.split(command)
                except ValueError as exc:
                    raise bad(key, f"not a shell command: {exc}") from None
            else:
                raise bad((i,), "gives neither arguments (a list of strings) nor command (a string)")
            out, skip = [], False
            for w in words:
                if skip:
                    skip = False
                elif w in ("-o", "-c"):
                    skip = True
                elif w not in ("-MD",) and not w.startswith(("-MT", "-MF")):
                    out.append(w)
            if not out:
                raise bad(key, "names no compiler")
            return Core(out, e["directory"], loc, key)
    raise UserError([Diagnostic(loc, None, "names no DIPU core source")])


def probe_declarations(core: Core, csrc: Path, names_by_header: dict[str, list[str]], work: Path) -> set[str]:
    """The mangled names of dipu::native declarations, taken by address in probes built like DIPU core."""
    found = set()
    for header, names in names_by_header.items():
        for name in names:
            source = work / f"probe_{name}.cpp"
            source.write_text(f'#include "{header}"\n[[maybe_unused]] auto* const probe = &dipu::native::{name};\n',
                              encoding="utf-8")
            obj = work / f"probe_{name}.o"
            done = core.compile(f"-I{csrc.parent}", "-O0", "-c", str(source), "-o", str(obj))
            if done.returncode == 0:     # not in dipu::native, or overloaded: not a kernels-file function
                found |= symbols([obj])[1]
    return found


_TEMPLATE_FUNCTION = re.compile(r"\btemplate\s*<")
_STOP = re.compile(r"[;{}()]")
_LAST_NAME = re.compile(r"\b([A-Za-z_]\w*)\s*$")
_BODY_OR_END = re.compile(r"[;{]")


def _matches(text: str, opening: str, closing: str) -> dict[int, int]:
    """Where each *opening* of *text* is balanced: its index -> the index just past its
    *closing*, found in one pass; a ';' leaves every open one unbalanced, as no template head
    or parameter list holds one outside a body."""
    matched, open_at = {}, []
    for m in re.finditer(f"[{re.escape(opening + closing)};]", text):
        if m.group() == opening:
            open_at.append(m.start())
        elif m.group() == closing:
            if open_at:
                matched[open_at.pop()] = m.end()
        else:
            open_at.clear()
    return matched


def header_templates(headers: list[Path]) -> set[str]:
    """Names of the function templates *headers* define: after a template <...> head, the
    name before the first top-level '(' when a body follows its parameter list. The brackets
    are balanced once per header, so a header is read in time linear in its size."""
    names = set()
    for path in headers:
        text = inputfile.read(path, key="--source").decode("utf-8", "replace")
        angles, parens = _matches(text, "<", ">"), _matches(text, "(", ")")
        for m in _TEMPLATE_FUNCTION.finditer(text):
            i = angles.get(m.end() - 1)
            stop = _STOP.search(text, i) if i is not None else None
            if stop is None or stop.group() != "(" or stop.start() not in parens:
                continue
            head = _LAST_NAME.search(text, i, stop.start())
            if head is None or head.group(1) in ("class", "struct", "operator"):
                continue
            after = _BODY_OR_END.search(text, parens[stop.start()])
            if after is not None and after.group() == "{":
                names.add(head.group(1))
    return names


def header_definitions(core: Core, csrc: Path, work: Path) -> set[str]:
    """The qualified names of the functions DIPU's kernel headers define: inline and static
    functions, from a probe including them compiled with -fkeep-inline-functions and
    -fkeep-static-functions, and function templates, named as the probe's namespaces qualify the
    template names found in those headers."""
    source = work / "probe_headers.cpp"
    source.write_text("".join(f'#include "{h}"\n' for h in dipu_link.KERNEL_HEADERS), encoding="utf-8")
    obj, deps = work / "probe_headers.o", work / "probe_headers.d"
    core.compile(f"-I{csrc.parent}", "-O0", "-fkeep-inline-functions", "-fkeep-static-functions",
                 "-MD", "-MF", str(deps), "-c", str(source), "-o", str(obj), check=True)
    defined, _ = symbols([obj], local=True)      # static functions of the headers too
    families = {dipu_link.function_family(d) for d in demangle(sorted(defined))}
    families = {f for f in families if f.startswith("dipu::")}
    included = [Path(w) for w in deps.read_text().replace("\\\n", " ").split()[1:]
                if w.endswith((".h", ".hpp")) and "csrc_dipu" in Path(w).parts]
    namespaces = {f.rsplit("::", 1)[0] for f in families}
    for name in header_templates(sorted(set(included))):
        families |= {f"{ns}::{name}" for ns in namespaces}
    return families


def demangle(names: list[str]) -> list[str]:
    out = subprocess.run([_tool("c++filt")], input="\n".join(names) + "\n", capture_output=True, text=True,
                         errors="replace", check=True).stdout
    return out.splitlines()


def run(build: Path, source: Path, out: Path | None, into_package: bool, commit: str, torch: str) -> str:
    target = snapshot_out.target(out, into_package, dipu_link.DATA)
    objects = core_objects(build)
    if not objects:
        raise UserError([Diagnostic(None, None, f"no DIPU object files under {display_path(str(build))}")])
    # Absolute: the probes are compiled in the directory compile_commands.json gives.
    csrc = source.resolve() / "dipu" / "torch_dipu" / "csrc_dipu"
    if not csrc.is_dir():
        raise UserError([Diagnostic(None, None, f"{display_path(str(source))} is not a deeplink.framework checkout "
                                                "(no dipu/torch_dipu/csrc_dipu)")])
    defined, undefined = symbols(objects)
    core = _core_command(build)
    with tempfile.TemporaryDirectory(prefix="deeplink-gen-probe-") as work:
        undefined |= probe_declarations(core, csrc, declared_in_headers(csrc), Path(work)) - defined
        in_headers = header_definitions(core, csrc, Path(work))
    names = sorted(undefined)
    expected = {m: d for m, d in zip(names, demangle(names)) if d.startswith("dipu::native::")}
    contract = dipu_link.LinkContract(commit, torch, tuple(sorted(expected.items())), frozenset(defined),
                                      frozenset(in_headers))
    data = json.dumps(dipu_link.to_data(contract), indent=0, sort_keys=True).encode("utf-8")
    # No name and no time in the gzip header: the same symbols give the same bytes.
    blob = gzip.compress(data, compresslevel=9, mtime=0)
    summary = (f"{len(objects)} objects, {len(expected)} expected, {len(defined)} provided, "
               f"{len(in_headers)} defined by headers")
    if inputfile.read_back(target) == blob:       # bounded: a huge file there is simply replaced
        return f"unchanged: {display_path(str(target))} ({summary})"
    snapshot_out.write(target, blob)
    return f"wrote {display_path(str(target))}: {summary}"
