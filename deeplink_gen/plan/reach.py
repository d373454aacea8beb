"""Which DIOPI functions a call of an op's wrapper can reach. DIOPI declares
its functions weak, so one the vendor's library lacks is null: DIPU registers
the op only when none of them is (the kernels' registrations test that), and
coverage reports the op as served by the CPU fallback otherwise."""

from __future__ import annotations

from deeplink_gen.cpptext import called_diopi, mentioned_wrappers
from deeplink_gen.model import ResolvedOp
from deeplink_gen.translate.signature import wrapper_name


def reached_functions(ops: tuple[ResolvedOp, ...], operators: frozenset[str]) -> dict[str, tuple[str, ...]]:
    """Every DIOPI function a call of each op's wrapper can reach: its call's (first), then, sorted,
    those its custom code calls and those of the wrappers it calls (its autograd forward and
    backward, the dipu_<op> its code names), transitively. *operators*: the DIOPI operators
    (runtime functions such as diopiGetLastErrorString are not weak)."""
    by_wrapper = {wrapper_name(r.op): r.op for r in ops}
    own, callees = {}, {}
    for r in ops:
        entry = r.entry
        texts = [text.value for _, text in entry.code]
        found = {by_wrapper.get(w) for text in texts for w in mentioned_wrappers(text)}
        if entry.autograd is not None:
            texts += [text.value for _, text in entry.autograd.texts()]
            found |= {ref.value for _, ref in entry.autograd.ops()}
        own[r.op] = {entry.call.function} | {f for text in texts for f in called_diopi(text) if f in operators}
        callees[r.op] = found - {None, r.op}
    out = {}
    for r in ops:
        seen, todo, reached = {r.op}, [r.op], set()
        while todo:
            op = todo.pop()
            reached |= own.get(op, set())
            for c in callees.get(op, set()) - seen:
                seen.add(c)
                todo.append(c)
        first = r.entry.call.function
        out[r.op] = (first, *sorted(reached - {first}))
    return out
