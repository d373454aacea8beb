"""The edits outside vendor/<name>/ that onboarding a vendor needs: a
checklist, one snippet per edited upstream file, and the same edits as
patches that `git apply` accepts: onboarding/dipu.patch (paths from the
deeplink.framework root; `render --into` applies it) and, when DIOPI does not
know the vendor's DIOPI_IMPL_OPT, onboarding/diopi.patch (paths from DIOPI's
root). Each change's lines come from the macros of templates/onboarding/edits.j2,
its context lines from the upstream excerpts in interfaces/data/."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen import output_paths
from deeplink_gen.interfaces.diopi import DIOPI_COMMIT
from deeplink_gen.interfaces.dipu import DIPU_COMMIT, SUPPORTED_TORCHS, Excerpt, edit_sites
from deeplink_gen.plan.onboarding import CONTEXT, DIOPI_ROOT, Change, OnboardingPlan, plan_onboarding
from deeplink_gen.render.job import Job
from deeplink_gen.render.templating import environment, render as render_template

SNIPPETS = ("dipu_CMakeLists.txt.snippet", "basedef.h.snippet", "vender_helper.hpp.snippet",
            "csrc_dipu_CMakeLists.txt.snippet", "pytorch_test_base.py.snippet", "diopi_impl_CMakeLists.txt.snippet")


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_len: int
    new_start: int
    new_len: int
    label: str
    lines: tuple[str, ...]        # each with its ' ', '-' or '+' and its newline


@dataclass(frozen=True)
class FileDiff:
    path: str
    hunks: tuple[Hunk, ...]


def change_lines(change: Change) -> list[str]:
    """The lines *change* puts in place of the upstream ones."""
    text = str(getattr(_edits(), change.edit.value)(*change.args))
    return text.splitlines(keepends=True)


def change_label(change: Change) -> str:
    return str(getattr(_edits(), change.edit.value + "_label")(*change.args)).strip()


def _edits():
    return environment().get_template("onboarding/edits.j2").module


def file_diff(excerpt: Excerpt, changes: list[Change]) -> FileDiff:
    """The hunks of *changes* to one upstream file, with CONTEXT lines of
    context from its excerpt; changes whose contexts touch share a hunk."""
    groups: list[list[Change]] = []
    for change in sorted(changes, key=lambda c: (c.first, c.count)):
        if groups and change.first < groups[-1][-1].end:
            raise AssertionError(f"overlapping changes to {excerpt.path}")
        if groups and change.first - groups[-1][-1].end <= 2 * CONTEXT:
            groups[-1].append(change)
        else:
            groups.append([change])
    hunks, delta = [], 0
    last_line = excerpt.first_line + len(excerpt.lines) - 1
    for group in groups:
        start, stop = group[0].first - CONTEXT, group[-1].end + CONTEXT     # stop: exclusive
        if start < excerpt.first_line or stop - 1 > last_line:
            raise AssertionError(f"the {excerpt.path} excerpt lacks context for {change_label(group[0])}")
        body, at = [], start
        for change in group:
            body += [" " + excerpt.line(n) for n in range(at, change.first)]
            body += ["-" + excerpt.line(n) for n in range(change.first, change.end)]
            body += ["+" + line for line in change_lines(change)]
            at = change.end
        body += [" " + excerpt.line(n) for n in range(at, stop)]
        old_len = sum(1 for line in body if line[0] != "+")
        new_len = sum(1 for line in body if line[0] != "-")
        hunks.append(Hunk(start, old_len, start + delta, new_len, "; ".join(change_label(c) for c in group),
                          tuple(body)))
        delta += new_len - old_len
    return FileDiff(excerpt.path, tuple(hunks))


def _patch(job: Job, c: OnboardingPlan, changes: tuple[Change, ...], template: str) -> str:
    sites = edit_sites()
    by_file: dict[str, list[Change]] = {}
    for change in changes:
        by_file.setdefault(change.path, []).append(change)
    diffs = [file_diff(sites[path], by_file[path]) for path in sorted(by_file)]
    return render_template(template, source=job.source, c=c, ident=c.vendor, diffs=diffs, dipu_commit=DIPU_COMMIT,
                           diopi_commit=DIOPI_COMMIT, diopi_root=DIOPI_ROOT,
                           library=job.vendor.diopi_library is not None)


def render(job: Job) -> dict[str, str]:
    c = plan_onboarding(job.vendor, output_paths.kernels_cmake_from_csrc())
    kernels = output_paths.kernels(int(job.rv.shards.value))
    ctx = dict(source=job.source, c=c, ident=c.vendor, kernels=kernels, kernels_cmake=output_paths.KERNELS_CMAKE,
               torch_version=str(job.rv.torch_version), supported_torchs=SUPPORTED_TORCHS, dipu_commit=DIPU_COMMIT,
               diopi_commit=DIOPI_COMMIT, diopi_root=DIOPI_ROOT, pytorch_config=output_paths.pytorch_config(job.vendor),
               vendor_dir=output_paths.vendor_dir(job.vendor))
    out = {output_paths.onboarding("ONBOARDING.md"): render_template("onboarding/ONBOARDING.md.j2", **ctx)}
    out.update({output_paths.onboarding(name): render_template(f"onboarding/{name}.j2", **ctx) for name in SNIPPETS})
    out[output_paths.DIPU_PATCH] = _patch(job, c, c.dipu_changes, "onboarding/dipu.patch.j2")
    if c.diopi_changes:
        out[output_paths.DIOPI_PATCH] = _patch(job, c, c.diopi_changes, "onboarding/diopi.patch.j2")
    return out
