"""The Jinja environment: templates are compiled once per process and their
compiled code is kept in the cache directory (Jinja's bytecode cache, checked
against each template's source), undefined names are errors, and every file
starts with the @generated header line. The plan's enums are globals, so
templates compare kinds, not strings."""

from __future__ import annotations

import functools
import json

import jinja2
from torchgen.model import SchemaKind

from deeplink_gen import cache
from deeplink_gen.cpptext import CONTROL
from deeplink_gen.model import DiopiArgKind
from deeplink_gen.paths import cache_dir
from deeplink_gen.plan.args import ArgKind
from deeplink_gen.plan.kernels import CpuUse, ValueKind

# Assembled so that this source file is not itself marked as generated.
GENERATED = "@" + "generated"


def cstr(text: str) -> str:
    """A C string literal for *text*."""
    return json.dumps(str(text), ensure_ascii=True)


def comment(text: str) -> str:
    """*text* as one line for a comment: each run of control characters or line breaks (which
    would end the comment, so that the rest runs as code) becomes one space."""
    return CONTROL.sub(" ", str(text)).strip()


# A line templates write after C++ pasted from YAML (preceded by #line N "file.yaml"), so
# that the compiler counts the generated file's own lines again; see resume_lines().
RESUME = "#line __deeplink_gen_resume__"


def resume_lines(text: str, path: str) -> str:
    """Turn each RESUME line into `#line <next line> "<path>"`."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line == RESUME:
            lines[i] = f"#line {i + 2} {cstr(path)}"
    return "\n".join(lines)


def header(marker: str, source: str) -> str:
    return f"{marker} {GENERATED} by deeplink-gen from {comment(source)}. DO NOT EDIT."


class _BytecodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's bytecode cache, where an entry that cannot be read or written
    only means compiling the template again."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:    # truncated or corrupt: Jinja's own checks miss some of these
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError:
            pass


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    if not cache.enabled():
        return None
    directory = cache_dir() / f"templates-{jinja2.__version__}"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return _BytecodeCache(str(directory))


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        bytecode_cache=_bytecode_cache(),
        loader=jinja2.PackageLoader("deeplink_gen", "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.globals.update(header=header, RESUME=RESUME, ArgKind=ArgKind, DiopiArgKind=DiopiArgKind, CpuUse=CpuUse, ValueKind=ValueKind, SchemaKind=SchemaKind)
    env.filters["rstrip"] = lambda text: str(text).rstrip()
    env.filters["cstr"] = cstr
    env.filters["comment"] = comment
    return env


def render(template: str, **context) -> str:
    return environment().get_template(template).render(**context)
