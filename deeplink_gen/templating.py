"""The Jinja environment: templates are compiled once per process, undefined
names are errors, and every file starts with the @generated header line."""

from __future__ import annotations

import functools

import jinja2

# Assembled so that this source file is not itself marked as generated.
GENERATED = "@" + "generated"


def header(comment: str, source: str) -> str:
    return f"{comment} {GENERATED} by deeplink-gen from {source}. DO NOT EDIT."


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("deeplink_gen", "templates"),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.globals["header"] = header
    env.filters["rstrip"] = lambda text: str(text).rstrip()
    return env


def render(template: str, **context) -> str:
    return environment().get_template(template).render(**context)
