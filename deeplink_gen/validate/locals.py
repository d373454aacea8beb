"""The names the kernel wrapper (templates/kernels/wrapper.j2) declares in its function
scope, where the op's arguments and the custom code's locals live too: a name declared
twice there does not compile. Also: whether a pasted expression is empty."""

from __future__ import annotations

import re

from deeplink_gen.model import CatalogEntry
from deeplink_gen.translate.args import ArgKind, aux_name, local_name
from deeplink_gen.translate.signature import OpSignature

# The wrapper's own locals, whatever the op (some only with a switch on), -> what each is.
# tests/test_kernels_validation.py checks this against the declarations of rendered wrappers.
WRAPPER_LOCALS = {
    "guard": "its device guard",
    "_": "its profiler record",
    "context": "its DIOPI context",
    "ctx": "the pointer to its DIOPI context",
    "dipuRecorder": "the profiler record of its DIOPI call",
    "ret": "the status of its DIOPI call",
}


def wrapper_locals(sig: OpSignature, entry: CatalogEntry) -> dict[str, str]:
    """Each name the wrapper of *entry* declares besides its parameters and the custom code's
    locals -> what it is: its own locals, and the converted forms (DIOPI handles, sizes,
    scalars) of the ins/outs/sizes locals and of the arguments and fresh returns the call
    passes by name (plan/kernels.call_args; a converted form the custom code declares itself
    and lists under locals is not declared again)."""
    out = dict(WRAPPER_LOCALS)
    passed = {a.text for a in entry.call.args if a.is_name}
    converted = [(p.name, p.kind) for p in sig.params if p.name in passed]
    converted += [(r.name, ArgKind.FRESH) for r in sig.fresh_returns if r.is_tensor and r.name in passed]
    converted += [(n, ArgKind.INS) for n, _ in entry.ins] + [(n, ArgKind.OUTS) for n in entry.outs]
    converted += [(n, ArgKind.SIZES) for n in entry.sizes]
    for name, kind in converted:
        for local in filter(None, (local_name(name, kind), aux_name(name, kind))):
            out.setdefault(local, f"the converted form of '{name}', which the call passes")
    return out


# What an expression may hold and still be empty: blanks, comments, line splices.
_NOTHING = re.compile(r"\s+|/\*.*?\*/|//[^\n]*|\\\n", re.S)


def is_empty(text: str) -> bool:
    """*text* holds no C++ token: only blanks and comments (a pasted expression that is
    empty leaves a declaration or a call without its value)."""
    i = 0
    while i < len(text):
        m = _NOTHING.match(text, i)
        if m is None:
            return False
        i = m.end()
    return True
