"""What a vendor's DIOPI library defines, found in DIOPI's impl/<vendor>
folder as DIOPI's adaptor generator finds it (adaptor/codegen/gen.py at
02f03c6a), by the C++ namespace its wrappers call: impl::<folder>
(impl::cuda for impl/torch) for every function below functions/ and
functions_ext/.

When DIOPI builds the vendor from another folder that holds an
ascend_config.yaml (IMPL_OPT ascend builds impl/ascend_npu, whose CMake runs
the generator with --impl_plugin), the functions below that folder's
diopi_impl/ count too, and ascend_config.yaml's lists say which namespace
(ascend or ascend_npu) each function listed there is called in."""

from __future__ import annotations

import re
from pathlib import Path

from deeplink_gen import inputfile
from deeplink_gen.commands.import_dipu.read import read_yaml, warning
from deeplink_gen.errors import Diagnostic, Loc, UserError
from deeplink_gen.interfaces.diopi import impl_choice, impl_namespace
from deeplink_gen.interfaces.diopi_impl import from_sources, scan
from deeplink_gen.model import Prototypes

PLUGIN_CONFIG = "ascend_config.yaml"
PLUGIN_SOURCES = "diopi_impl"


def _namespace(folder: Path) -> str:
    return impl_namespace(folder.name)


def _plugin(config: Path) -> tuple[dict[str, str], frozenset[str], str]:
    """ascend_config.yaml's namespace per function, the plugin folder's functions, its namespace."""
    data = read_yaml(config, "--impl", "--impl").data
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise UserError([Diagnostic(Loc(str(config), 1, 1), "(top level)",
                                    "expected namespace: [DIOPI functions] lists")])
    where = {str(f): str(ns) for ns, functions in data.items() for f in functions}
    return where, scan(config.parent / PLUGIN_SOURCES), _namespace(config.parent)


# ImplHelper.cmake's diopi_use_adapter(<adaptor dir> <impl dir> "<config_device>" ...): the
# generator wraps the functions of impl/<config_device> (muxi's CMakeLists.txt passes "torch").
_USE_ADAPTER = re.compile(r'^\s*diopi_use_adapter\(\s*\S+\s+\S+\s+"(\w+)"', re.M)


def wrapped_instead(folder: Path) -> tuple[Path, Path, int] | None:
    """(the other impl folder, the CMakeLists.txt, its line) when the build of *folder* has
    DIOPI's generator wrap another folder's functions; None when it wraps its own."""
    cmake = folder / "CMakeLists.txt"
    if not cmake.is_file():
        return None
    text = inputfile.read(cmake, key="--impl").decode("utf-8", errors="replace")
    m = _USE_ADAPTER.search(text)
    if m is None or m.group(1) == folder.name:
        return None
    return folder.parent / m.group(1), cmake, text.count("\n", 0, m.start()) + 1


def _wrapped_elsewhere(folder: Path) -> Diagnostic | None:
    """A warning when the folder's CMakeLists.txt has DIOPI's generator wrap another folder's functions."""
    instead = wrapped_instead(folder)
    if instead is None:
        return None
    other, cmake, line = instead
    return warning(str(cmake), line,
                   f"this build's adaptor wraps the functions of {other} (diopi_use_adapter \"{other.name}\", "
                   f"impl::{impl_namespace(other.name)}), not {folder}'s: --impl with {other} lists what the library "
                   f"exports")


def read_implemented(folder: Path, diopi_impl: str, protos: Prototypes) -> tuple[dict[str, list[str]], list[Diagnostic]]:
    """{namespace: sorted DIOPI functions} and warnings, for the vendor whose
    DIOPI_IMPL_OPT is *diopi_impl* and whose DIOPI impl folder is *folder*."""
    notes: list[Diagnostic] = []
    elsewhere = _wrapped_elsewhere(folder)
    if elsewhere is not None:
        notes.append(elsewhere)
    own = _namespace(folder)
    found = {f: own for f in from_sources(folder)}
    choice = impl_choice(diopi_impl)
    built = folder.parent / choice.directory if choice is not None else folder
    config = built / PLUGIN_CONFIG
    if built.resolve() != folder.resolve() and config.is_file():
        where, plugin, plugin_ns = _plugin(config)
        for f in sorted(set(where) - set(found) - plugin):
            notes.append(warning(str(config), 0, f"{f} is listed but defined in neither {folder} nor "
                                                 f"{built / PLUGIN_SOURCES}; not wrapped"))
        found.update({f: plugin_ns for f in plugin if f not in found})
        found.update({f: ns for f, ns in where.items() if f in found})
    undeclared = sorted(f for f in found if protos.get(f) is None)
    if undeclared:
        notes.append(warning(str(folder), 0, f"defined but not declared by DIOPI's headers, so not wrapped: "
                                             f"{', '.join(undeclared)}"))
    out: dict[str, list[str]] = {}
    for f in sorted(found):
        if protos.get(f) is not None:
            out.setdefault(found[f], []).append(f)
    return {ns: out[ns] for ns in sorted(out)}, notes
