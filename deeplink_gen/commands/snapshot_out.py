"""Where a snapshot command writes: the file given with --out, or, with
--into-package, the file the package ships. Only a source checkout may have
its shipped data rewritten: in an installed package that data belongs to the
installer, and a refresh would silently change what every workspace using that
install is checked against (and be lost at the next upgrade). Neither is written
through a folder that links out of the source checkout, or out of the current
folder for an --out in it. What --out names is replaced only if it is a
regular file."""

from __future__ import annotations

import os
from pathlib import Path

from deeplink_gen.atomic import bound, write_atomic
from deeplink_gen.errors import Diagnostic, UserError, display_path
from deeplink_gen.input_paths import PACKAGE


def target(out: Path | None, into_package: bool, shipped: Path) -> Path:
    """The file to write; *shipped* is the package's own copy."""
    if out is not None and into_package:
        raise UserError([Diagnostic(None, "--into-package", "give either --out FILE or --into-package, not both")])
    if out is not None:
        if os.path.lexists(out) and not out.is_file():
            raise UserError([Diagnostic(None, "--out", (
                f"{display_path(str(out))} is not a regular file (a folder, device or pipe); nothing was read or "
                "written: give the path of a file"))])
        return out
    if not into_package:
        raise UserError([Diagnostic(None, "--out", f"give --out FILE (or --into-package to refresh the shipped "
                                                   f"{display_path(str(shipped))} in a source checkout)")])
    if not (PACKAGE.parent / "pyproject.toml").is_file():
        raise UserError([Diagnostic(None, "--into-package", (
            f"deeplink-gen runs from an installed package ({display_path(str(PACKAGE))}), not a source checkout; "
            f"its data is not rewritten: give --out FILE"))])
    return shipped


def write(target: Path, data: bytes) -> None:
    """Replace *target* (from target()) with *data*."""
    checkout = PACKAGE.parent
    root = checkout if Path(os.path.abspath(target)).is_relative_to(checkout) else Path(os.getcwd())
    write_atomic(target, data, within=bound(target, root))
