"""A warning about a vendor runtime's events: eventElapsedTime defined while
createEvent makes events without timing. On a CUDA-like SDK an elapsed time
can only be measured between events created with timing enabled; any other
pair fails ("invalid resource handle"), so every DIPU elapsed-time query
(torch's Event.elapsed_time, the profiler) would fail at run time."""

from __future__ import annotations

import re
from dataclasses import replace

from deeplink_gen.cpptext import IDENT, blank_comments
from deeplink_gen.errors import Diagnostics, Loc
from deeplink_gen.model import Impl, RuntimeSpec
from deeplink_gen.model.runtime import ImplKind

# The SDK flags that turn timing off: cudaEventDisableTiming, tangEventDisableTiming, ACL_EVENT_DISABLE_TIMING, ...
_DISABLE_TIMING = re.compile(r"disable_?timing", re.I)
# Implementations that define no elapsed-time query.
_UNDEFINED = (ImplKind.UNSUPPORTED, ImplKind.NOOP)


def disable_timing_flag(impl: Impl) -> tuple[str, Loc] | None:
    """The first identifier of *impl*'s C++ text (templates, custom code;
    not comments) that names a disable-timing flag, and where it is."""
    texts = [(t.text, t.loc) for t in impl.all_templates()]
    if impl.custom is not None:
        texts.append((impl.custom.value, impl.custom.loc))
    for text, loc in texts:
        text = blank_comments(text)
        for m in IDENT.finditer(text):
            if _DISABLE_TIMING.search(m.group(0)):
                lines = text.count("\n", 0, m.start())
                return m.group(0), replace(loc, line=loc.line + lines, col=loc.col if lines == 0 else 1)
    return None


def check_event_timing(spec: RuntimeSpec, diags: Diagnostics) -> None:
    create, elapsed = spec.impl("createEvent"), spec.impl("eventElapsedTime")
    if create is None or elapsed is None or elapsed.kind in _UNDEFINED:
        return
    found = disable_timing_flag(create)
    if found is None:
        return
    flag, loc = found
    diags.warn(loc, ("runtime", "device", "functions", "createEvent"),
               f"creates events with {flag} while eventElapsedTime (line {elapsed.loc.line}) is defined: on a "
               f"CUDA-like SDK an elapsed time needs two events created with timing, so every elapsed-time query "
               f"would fail (invalid resource handle); create timed events (drop {flag}: the SDK's default "
               f"flags), or write 'eventElapsedTime: unsupported'")
