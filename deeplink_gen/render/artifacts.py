"""Every artifact of one vendor, in order: {path: text}."""

from __future__ import annotations

from deeplink_gen.render import (
    adaptor, build, convert_config, diopitest, host_diopi, kernels, manifest, onboarding, runtime, testconfig,
)
from deeplink_gen.render.job import Job

# The manifest comes last and lists every file before it.
ARTIFACTS = (kernels, onboarding, runtime, diopitest, host_diopi, build, convert_config, adaptor, testconfig,
             manifest)


def render_vendor(job: Job) -> dict[str, str]:
    files: dict[str, str] = {}
    for artifact in ARTIFACTS:
        files.update(artifact.render(job, files))
    return files
