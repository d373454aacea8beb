"""Templates compiled to Python modules when the package is built (a wheel
or an editable install: hatch_build.py), so that no run compiles a template
and no compiled code is kept in the cache folder, where whoever can write it
could make a run execute anything. The compiled modules sit in the package
beside the templates, with the sha256 of each template they were compiled
from; a template edited since (a working tree) makes templating compile from
source instead. This module imports nothing of deeplink-gen, so the build
can load it by its path."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import jinja2

# What the templates are compiled with (runtime settings are in templating.py).
SYNTAX = dict(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)
# The filters templating.py defines: compiling checks only that they exist.
FILTERS = ("comment", "cstr", "rstrip", "yaml_str")
COMPILED = "templates_compiled"
_SOURCES = "sources.json"


def _sources(package: Path) -> dict:
    root = package / "templates"
    return {"jinja2": jinja2.__version__,
            "templates": {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                          for p in sorted(root.rglob("*.j2"))}}


def fresh(package: Path) -> bool:
    """Whether the compiled modules match every template and this Jinja."""
    try:
        recorded = json.loads((package / COMPILED / _SOURCES).read_text(encoding="utf-8"))
        return recorded == _sources(package)
    except (OSError, ValueError):
        return False


def build(package: Path) -> Path:
    """Compile every template of *package* into its COMPILED folder."""
    target = package / COMPILED
    staging = package / (COMPILED + ".new")
    shutil.rmtree(staging, ignore_errors=True)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(package / "templates")), **SYNTAX)
    env.filters.update({name: str for name in FILTERS})
    env.compile_templates(str(staging), zip=None, ignore_errors=False)
    (staging / _SOURCES).write_text(json.dumps(_sources(package), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target
