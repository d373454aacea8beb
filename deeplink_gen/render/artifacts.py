"""Every artifact of one vendor, in order: {path: text}. Each is rendered
from the job alone; the manifest comes last and lists every file before it."""

from __future__ import annotations

from deeplink_gen.render import (
    adaptor, build, convert_config, diopitest, host_diopi, kernels, manifest, onboarding, runtime, testconfig,
)
from deeplink_gen.render.job import Job

ARTIFACTS = (kernels, onboarding, runtime, diopitest, host_diopi, build, convert_config, adaptor, testconfig)


def render_vendor(job: Job) -> dict[str, str]:
    files: dict[str, str] = {}
    for artifact in ARTIFACTS:
        files.update(artifact.render(job))
    files.update(manifest.render(job, files))
    return files
