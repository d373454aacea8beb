"""AutoGenedKernels.cpp (or its shards): the DIOPI wrapper for every enabled
op, its autocompare twin, and the DIPU_LIBRARY_IMPL registrations; and
AutoGenedKernels.cmake, the list of those files that DIPU's build includes
in place of its own kernel generator (see onboarding/dipu.patch)."""

from __future__ import annotations

import re

from deeplink_gen.plan.kernels import plan_kernels
from deeplink_gen.render import paths
from deeplink_gen.render.job import Job
from deeplink_gen.render.templating import environment, render as render_template, resume_lines

_PLACEHOLDER = re.compile(r"\$\{PREFERRED_MEMORY_FORMAT_PLACEHOLDER(_3D)?:-([^}]*)\}")


def fill_placeholders(text: str, memory_format: str | None) -> str:
    """Replace the memory-format placeholders in custom code (non-greedy: a
    later '}' on the same line is left alone); without a memory format each
    keeps its default text."""
    if not text or "PREFERRED_MEMORY_FORMAT_PLACEHOLDER" not in text:
        return text
    macros = environment().get_template("kernels/memory_format.j2").module

    def replace(m: re.Match) -> str:
        if memory_format is None:
            return m.group(2)
        return str(macros.memory_format(memory_format, bool(m.group(1)))).strip()

    return _PLACEHOLDER.sub(replace, text)


def render(job: Job, files: dict[str, str]) -> dict[str, str]:
    """One translation unit, or one per shard. A shard declares the wrappers
    its code calls, so it compiles on its own and changes only when one of
    its own ops (or a callee's signature) does."""
    plan = plan_kernels(job.rv)
    common = dict(vendor=job.vendor.identity, source=job.source, torch_version=job.rv.torch_version,
                  fill=fill_placeholders, origin=job.origin)
    targets = paths.kernels(plan.shards)
    out = {paths.KERNELS_CMAKE: render_template("kernels/AutoGenedKernels.cmake.j2", vendor=job.vendor,
                                                source=job.source, files=[t.rsplit("/", 1)[1] for t in targets])}
    for i, path in enumerate(targets):
        mine, declared = plan.shard(i) if plan.shards > 1 else (plan.wrappers, ())
        shard = {"index": i, "count": plan.shards, "declared": declared} if plan.shards > 1 else None
        text = render_template("kernels/AutoGenedKernels.cpp.j2", plans=mine, includes=plan.includes(mine),
                               checks=plan.checks(mine),
                               shard=shard, **common)
        out[path] = resume_lines(text, path)
    return out
