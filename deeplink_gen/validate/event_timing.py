"""A warning about a vendor runtime's events: eventElapsedTime defined while
createEvent makes events without timing. On a CUDA-like SDK an elapsed time
can only be measured between events created with timing enabled; any other
pair fails ("invalid resource handle"), so every DIPU elapsed-time query
(torch's Event.elapsed_time, the profiler) would fail at run time."""

from __future__ import annotations

import re

from deeplink_gen.errors import Diagnostics
from deeplink_gen.model import Impl, RuntimeSpec

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# The SDK flags that turn timing off: cudaEventDisableTiming, tangEventDisableTiming, ACL_EVENT_DISABLE_TIMING, ...
_DISABLE_TIMING = re.compile(r"disable_?timing", re.I)
# Implementations that define no elapsed-time query.
_UNDEFINED = ("unsupported", "noop")


def _texts(impl: Impl) -> list[str]:
    """The C++ text of *impl*: its templates and custom code, comments left out."""
    texts = [t.text for t in impl.all_templates()]
    if impl.custom is not None:
        texts.append(impl.custom)
    return [_COMMENT.sub(" ", text) for text in texts]


def disable_timing_flag(impl: Impl) -> str | None:
    """The first identifier of *impl*'s text that names a disable-timing flag, else None."""
    for text in _texts(impl):
        for ident in _IDENT.findall(text):
            if _DISABLE_TIMING.search(ident):
                return ident
    return None


def check_event_timing(spec: RuntimeSpec, diags: Diagnostics) -> None:
    create, elapsed = spec.impl("createEvent"), spec.impl("eventElapsedTime")
    if create is None or elapsed is None or elapsed.kind in _UNDEFINED:
        return
    flag = disable_timing_flag(create)
    if flag is None:
        return
    diags.warn(create.loc, ("runtime", "device", "functions", "createEvent"),
               f"creates events with {flag} while eventElapsedTime (line {elapsed.loc.line}) is defined: on a "
               f"CUDA-like SDK an elapsed time needs two events created with timing, so every elapsed-time query "
               f"would fail (invalid resource handle); create timed events (drop {flag}: the SDK's default "
               f"flags), or write 'eventElapsedTime: unsupported'")
