"""The Jinja environment: templates come compiled from the build
(precompile.py), or are compiled from source once per process where a
template changed since; undefined names are errors, and every file starts
with the @generated header line. The plan's enums are globals, so
templates compare kinds, not strings."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import jinja2
from torchgen.model import SchemaKind

from deeplink_gen.cpptext import CONTROL
from deeplink_gen.model import DiopiArgKind
from deeplink_gen.model.patterns import Part, Pattern
from deeplink_gen.model.runtime import GeneratorKind, ImplKind, OnFailure
from deeplink_gen.plan.conformance import Expect
from deeplink_gen.plan.host_diopi_calls import Glue, Store
from deeplink_gen.plan.kernels import CpuUse, ValueKind
from deeplink_gen.plan.onboarding import Status
from deeplink_gen.render import precompile
from deeplink_gen.translate.args import ArgKind

# Assembled so that this source file is not itself marked as generated.
GENERATED = "@" + "generated"


# Printable ASCII but for the three characters cstr escapes: such text is its own C string.
_CSTR_PLAIN = re.compile(r'[ !#-/0-9:-=>@-\[\]-~]*')


def cstr(text: str) -> str:
    """A C string literal for *text* that any compiler takes, whatever the text: printable ASCII
    as it is (backslash, quote and question mark escaped: no trigraph), every other byte of its
    UTF-8 as a three-digit octal escape (which, unlike \\x, never runs on into the next character,
    and, unlike \\u, takes any character, beyond the BMP and control ones too)."""
    text = str(text)
    if _CSTR_PLAIN.fullmatch(text):
        return f'"{text}"'
    out = []
    for byte in text.encode("utf-8", "surrogatepass"):
        char = chr(byte)
        out.append("\\" + char if char in '\\"?' else char if 0x20 <= byte < 0x7F else f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def comment(text: str) -> str:
    """*text* as one line for a comment: each run of control characters or line breaks (which
    would end the comment, so that the rest runs as code) becomes one space."""
    return CONTROL.sub(" ", str(text)).strip()


# What a YAML plain scalar may hold as it is in the files deeplink-gen writes: no character that
# could start a comment, a mapping, a flow collection, a tag, an alias or a quote.
_YAML_PLAIN = re.compile(r"[A-Za-z0-9_./=<>~!+-][A-Za-z0-9 _./=<>~!+,@'-]*")


def yaml_str(text: str) -> str:
    """*text* as one YAML scalar that reads back as exactly *text*: plain when it is safe so,
    else double-quoted with JSON's escapes (which YAML's double quotes read the same)."""
    text = str(text)
    if _YAML_PLAIN.fullmatch(text) and not text.endswith(" "):
        return text
    return json.dumps(text)


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


# A line the kernels' templates write before C++ pasted from an op's entry: its macro name and
# how many lines follow, which render moves into the shard's .pasted.inc (render/kernels.py).
# It begins with a control character, which no text from a user keeps outside a paste.
PASTE = "\x01deeplink-gen-paste"


# header() as the first line of every file deeplink-gen writes: always in a comment of the
# file's language, or as the value of a JSON file's first key.
_HEADER_LINE = re.compile(rb'(?://|#|<!--|\{"//": ") ?' + GENERATED.encode() + rb" by deeplink-gen from [^\n]*DO NOT EDIT\.")


def written_by_us(data: bytes) -> bool:
    """Whether the file whose bytes are *data* starts with the line header() writes: a mention
    of deeplink-gen anywhere else (in a user's note, say) does not make it deeplink-gen's."""
    return _HEADER_LINE.match(data[:1024]) is not None


def header(marker: str, source: str) -> str:
    return f"{marker} {GENERATED} by deeplink-gen from {comment(source)}. DO NOT EDIT."


def _loader() -> jinja2.BaseLoader:
    """The modules the build compiled, when they match the templates; else the templates' source."""
    package = Path(__file__).resolve().parent.parent
    if precompile.fresh(package):
        return jinja2.ModuleLoader(str(package / precompile.COMPILED))
    return jinja2.PackageLoader("deeplink_gen", "templates")


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=_loader(), undefined=jinja2.StrictUndefined, **precompile.SYNTAX)
    env.globals.update(header=header, RESUME=RESUME, PASTE=PASTE)
    # The plan's enums: templates compare kinds (`is sameas`), never their names.
    env.globals.update(ArgKind=ArgKind, DiopiArgKind=DiopiArgKind, CpuUse=CpuUse, ValueKind=ValueKind,
                       SchemaKind=SchemaKind, Status=Status, ImplKind=ImplKind, Pattern=Pattern, Part=Part,
                       GeneratorKind=GeneratorKind, Expect=Expect, OnFailure=OnFailure, Glue=Glue, Store=Store)
    filters = {"rstrip": lambda text: str(text).rstrip(), "cstr": cstr, "comment": comment, "yaml_str": yaml_str}
    env.filters.update({name: filters[name] for name in precompile.FILTERS})
    return env


def render(template: str, **context) -> str:
    return environment().get_template(template).render(**context)
