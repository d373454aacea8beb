"""What `import-dipu --dipu CHECKOUT` reads from a deeplink.framework checkout:
DIPU's op file and, for each vendor, the convert_config.yaml and impl folder
of the DIOPI folder DIPU builds that vendor with (its DIOPI_IMPL_OPT, mapped
to a folder as DIOPI's impl/CMakeLists.txt maps it: cuda's is impl/torch,
topsrider's impl/topsrider, ascend's own files are in impl/ascend).

The checkout's layout is written here once, relative to its root, so that
neither the command line nor the import names a path inside it. A file the
options name explicitly wins over the checkout's. DIOPI has folders for only
some of DIPU's vendors and convert configs for fewer, so a vendor without
one gets none and the report says where it looked; a checkout that is not
one (no dipu/, no op file, DIOPI's submodule not initialised) is an error
that says what to do."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from deeplink_gen.commands.import_dipu.implemented import wrapped_instead
from deeplink_gen.errors import Diagnostic, Loc, UserError
from deeplink_gen.interfaces.diopi import impl_folder
from deeplink_gen.interfaces.diopi_impl import SOURCE_DIRS
from deeplink_gen.interfaces.dipu import UPSTREAM
from deeplink_gen.output_paths import CSRC_DIR
from deeplink_gen.plan.onboarding import DIOPI_ROOT

OPTION = "--dipu"
DIPU = "dipu"
FUNCTIONS = f"{DIPU}/scripts/autogen_diopi_wrapper/diopi_functions.yaml"
DIOPI_IMPL = f"{DIOPI_ROOT}/impl"
CONVERT_CONFIG = "convert_config.yaml"
VENDOR_RUNTIMES = f"{CSRC_DIR}/vendor"       # DIPU's hand-written runtime of each vendor, one folder each


class Kind(enum.Enum):
    """What the import reads for a vendor from DIOPI, and the option that names it instead."""

    CONVERT_CONFIG = ("convert config", "--convert-config")
    IMPL = ("impl folder", "--impl")

    def __init__(self, label: str, option: str) -> None:
        self.label = label
        self.option = option

    def find(self, folder: Path) -> tuple[Path | None, str | None]:
        """What the vendor's DIOPI *folder* gives the import (None: nothing), and why:
        an impl folder counts only with a folder DIOPI's adaptor generator scans, and
        is the folder whose functions its build has that generator wrap."""
        if self is Kind.CONVERT_CONFIG:
            path = folder / CONVERT_CONFIG
            return (path, None) if path.is_file() else (None, f"no {path}")
        if not folder.is_dir():
            return None, f"no {folder}"
        instead = wrapped_instead(folder)
        why = None
        if instead is not None:
            folder, cmake, line = instead
            why = f"diopi_use_adapter at {cmake}:{line} wraps this folder's functions"
        if not any((folder / d).is_dir() for d in SOURCE_DIRS):
            return None, f"no {' or '.join(d + '/' for d in SOURCE_DIRS)} in {folder}" + (f"; {why}" if why else "")
        return folder, why


def diopi_impl(vendor: str) -> str:
    """The vendor's DIOPI_IMPL_OPT: DIPU's own for a vendor it knows, else the vendor's name."""
    up = UPSTREAM.get(vendor)
    return up.diopi_impl if up is not None else vendor


@dataclass(frozen=True)
class Found:
    """One input of one vendor: what the import reads (None: nothing) and why
    that, when it is not simply the checkout's file of that name."""

    vendor: str
    kind: Kind
    path: Path | None
    why: str | None = None

    def line(self) -> str:
        shown = "none" if self.path is None else str(self.path)
        return f"{self.vendor}: {self.kind.label}: {shown}" + (f" ({self.why})" if self.why else "")


@dataclass(frozen=True)
class Checkout:
    """A checkout's inputs of the import, after the options that override them."""

    root: Path
    functions: Path
    found: tuple[Found, ...]

    def paths(self, kind: Kind) -> dict[str, Path]:
        """{vendor: path} of what the import reads of *kind*."""
        return {f.vendor: f.path for f in self.found if f.kind is kind and f.path is not None}

    def report(self) -> list[str]:
        """One line for the op file, then one per vendor and input."""
        return [f"op file: {self.functions}", *(f.line() for f in self.found)]

    def runtime_folder(self, vendor: str) -> Path:
        """DIPU's hand-written runtime of *vendor*: where an import of vendor runtimes reads it."""
        return self.root / VENDOR_RUNTIMES / vendor


def _fail(path: Path, message: str) -> UserError:
    return UserError([Diagnostic(Loc(str(path)), OPTION, message)])


def _dipu(root: Path) -> None:
    if not root.is_dir():
        raise _fail(root, "not a directory: give the root of a deeplink.framework checkout (the folder holding dipu/)")
    if not (root / DIPU).is_dir():
        inside = (root / FUNCTIONS.removeprefix(f"{DIPU}/")).is_file()
        raise _fail(root, f"no {DIPU}/ folder here: " + ("this looks like the dipu/ folder itself; give its parent, "
                                                         "the repository's root" if inside else
                                                         "give the root of a deeplink.framework checkout"))


def _diopi(root: Path) -> Path:
    """DIOPI's impl/ folder in the checkout; an error when the submodule is not there."""
    diopi = root / DIOPI_ROOT
    if not diopi.is_dir() or not any(diopi.iterdir()):
        state = "empty" if diopi.is_dir() else "absent"
        raise _fail(diopi, f"the DIOPI submodule is not initialised (the folder is {state}): "
                           f"run `git submodule update --init {DIOPI_ROOT}` in {root}, or give --convert-config and "
                           "--impl for every vendor")
    impl = root / DIOPI_IMPL
    if not impl.is_dir():
        raise _fail(impl, "not a folder: the DIOPI submodule has no impl/; check it out at the commit DIPU pins "
                          f"(`git submodule update {DIOPI_ROOT}` in {root})")
    return impl


def read(root: Path, vendors: list[str], functions: Path | None, given: dict[Kind, dict[str, Path]]) -> Checkout:
    """The inputs of the import for *vendors* in the checkout at *root*: those
    *functions* and *given* (the options' paths) name, else the checkout's.
    DIOPI is read only when some vendor's input is not given."""
    _dipu(root)
    if functions is None:
        functions = root / FUNCTIONS
        if not functions.is_file():
            raise _fail(functions, "DIPU's op file is not there: give the root of a deeplink.framework checkout "
                                   "that has it, or name the file with --functions PATH")
    wanted = [(v, kind) for v in vendors for kind in Kind]
    impl = _diopi(root) if any(v not in given.get(kind, {}) for v, kind in wanted) else None
    found = []
    for v, kind in wanted:
        path = given.get(kind, {}).get(v)
        found.append(Found(v, kind, path, f"given with {kind.option}") if path is not None else
                     Found(v, kind, *kind.find(impl / impl_folder(diopi_impl(v)))))
    return Checkout(root, functions, tuple(found))
