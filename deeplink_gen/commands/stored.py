"""What commands reuse from earlier runs, around the pipeline (which keeps
nothing itself): the checked workspace, and a render's files and warnings,
each stored under its request's key (request.py) in the one cache store."""

from __future__ import annotations

from deeplink_gen import cache, pipeline
from deeplink_gen.errors import Diagnostic
from deeplink_gen.options import Torch
from deeplink_gen.request import Request


def checked(request: Request, torch: Torch) -> pipeline.Checked:
    """The request's workspace, loaded and validated (UserError if it is not
    valid), reused while none of its inputs changes."""
    found = cache.load("model", request.key("model"))
    if isinstance(found, pipeline.Checked):
        return found
    made = pipeline.check(request, torch, cache.MEMO)
    if request.unchanged():      # no input changed while it was read
        cache.store("model", request.key("model"), made)
    return made


def warnings(request: Request) -> tuple[Diagnostic, ...] | None:
    """The warnings of the render this request made before, if stored (apart
    from its files, so that a run with nothing to write reads only these)."""
    found = cache.load("warnings", request.key("render"))
    return found if isinstance(found, tuple) and all(isinstance(d, Diagnostic) for d in found) else None


def files(request: Request) -> dict[str, dict[str, str]] | None:
    """The files this request rendered before, by vendor, if stored."""
    from deeplink_gen.output.writer import outside

    found = cache.load("render", request.key("render"))
    if not (isinstance(found, dict) and sorted(found) == sorted(request.names)
            and all(isinstance(f, dict) and all(type(rel) is str and type(text) is str and not outside(name, rel)
                                                for rel, text in f.items())
                    for name, f in found.items())):
        return None
    return found


def render(request: Request, torch: Torch, checked: pipeline.Checked) -> tuple[pipeline.Rendered, str | None]:
    """pipeline.run for *request* from its *checked* workspace, and the key
    its files and warnings are stored under: None when an input changed
    while it ran, and nothing was stored."""
    made = pipeline.run(request, torch, checked, cache.MEMO)
    if not request.unchanged():
        return made, None
    key = request.key("render")
    cache.store("warnings", key, made.warnings)
    cache.store("render", key, made.files)
    return made, key
