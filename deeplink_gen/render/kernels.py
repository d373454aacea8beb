"""AutoGenedKernels.cpp (or its shards): the DIOPI wrapper for every enabled
op, its autocompare twin, and the DIPU_LIBRARY_IMPL registrations; and
AutoGenedKernels.cmake, the list of those files that DIPU's build includes
in place of its own kernel generator (see onboarding/dipu.patch), and with
defaults.precompiled_header the header it precompiles for them."""

from __future__ import annotations

import hashlib
import re

from deeplink_gen import digests, output_paths
from deeplink_gen.cpptext import MEMORY_FORMAT_PLACEHOLDER
from deeplink_gen.plan.kernels import plan_kernels
from deeplink_gen.render.job import Job
from deeplink_gen.render.templating import PASTE, environment, render as render_template



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

    return MEMORY_FORMAT_PLACEHOLDER.sub(replace, text)


def op_code(job: Job, plans) -> dict[str, str]:
    """Each op's code (wrapper.j2's block) by wrapper name. The text is a
    function of the op's plan (a frozen dataclass whose repr shows every
    field) and of the origin of pasted code (relative to the workspace), so
    it is stored in the cache directory under that digest and rendered again
    only when that changes: after an edit, most ops' code is reused from the
    job's memo (and kept again only if any op's code or the set of ops changed)."""
    keys = {p.wrapper: hashlib.sha256(digests.key_bytes(f"{job.root}\0{p!r}")).hexdigest() for p in plans}
    store_key = digests.digest("op-code", str(job.root), job.vendor.name)
    stored = job.memo.get("op-code", store_key)
    stored = stored if isinstance(stored, dict) else {}
    macros = None
    code = {}
    for p in plans:
        text = stored.get(keys[p.wrapper])
        if not isinstance(text, str):
            if macros is None:
                macros = environment().get_template("kernels/wrapper.j2").make_module(
                    dict(fill=fill_placeholders, origin=job.origin))
            text = str(macros.block(p))
        code[p.wrapper] = text
    current = {keys[w]: text for w, text in code.items()}
    if current != stored:
        job.memo.put("op-code", store_key, current)
    return code


def lift_pasted(text: str) -> tuple[str, list[tuple[str, str]]]:
    """An op's code without the texts pasted from YAML (each PASTE line, then as many lines
    as it says), and those texts by macro name, for the shard's .pasted.inc."""
    lines = text.split("\n")
    kept, lifted, i = [], [], 0
    while i < len(lines):
        if lines[i].startswith(PASTE + " "):
            _, name, count = lines[i].split(" ")
            end = i + 1 + int(count)
            lifted.append((name, "\n".join(lines[i + 1:end])))
            i = end
        else:
            kept.append(lines[i])
            i += 1
    return "\n".join(kept), lifted


def render(job: Job) -> dict[str, str]:
    """One translation unit, or one per shard, each with the .pasted.inc of
    the C++ its ops' entries give (when they give any). A shard declares the
    wrappers its code calls, so it compiles on its own and changes only when
    one of its own ops (or a callee's signature) does; no line number in it
    or its .pasted.inc depends on another op."""
    plan = plan_kernels(job.rv, frozenset(job.protos.names()))
    common = dict(vendor=job.vendor, source=job.source, torch_version=job.rv.torch_version)
    code, pasted = {}, {}
    for wrapper, text in op_code(job, plan.wrappers).items():
        code[wrapper], pasted[wrapper] = lift_pasted(text)
    targets = output_paths.kernels(plan.shards)
    chosen = job.vendor.precompiled_header
    precompiled = output_paths.KERNELS_PRECOMPILED if chosen is not None and chosen.value else None
    out = {output_paths.KERNELS_CMAKE: render_template(
        "kernels/AutoGenedKernels.cmake.j2", vendor=job.vendor, source=job.source,
        files=[t.rsplit("/", 1)[1] for t in targets], torch_version=job.rv.torch_version,
        precompiled=precompiled and precompiled.rsplit("/", 1)[1])}
    if precompiled:
        out[precompiled] = render_template("kernels/AutoGenedKernelsPrecompiled.h.j2", vendor=job.vendor,
                                           source=job.source)
    for i, path in enumerate(targets):
        mine, declared = plan.shard(i) if plan.shards > 1 else (plan.wrappers, ())
        shard = {"index": i, "count": plan.shards, "declared": declared} if plan.shards > 1 else None
        texts = [t for p in mine for t in pasted[p.wrapper]]
        inc = output_paths.pasted_of(path)
        out[path] = render_template("kernels/AutoGenedKernels.cpp.j2", plans=mine, includes=plan.includes(mine),
                                    checks=plan.checks(mine), code=code, shard=shard,
                                    pasted_file=inc.rsplit("/", 1)[1] if texts else None, **common)
        if texts:
            out[inc] = render_template("kernels/pasted.inc.j2", source=job.source, texts=texts,
                                       cpp=path.rsplit("/", 1)[1])
    return out
