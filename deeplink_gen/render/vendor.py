"""Render every artifact of one vendor into memory: {relative path: text}."""

from __future__ import annotations

from deeplink_gen.render.kernels import KERNELS_PATH, render_kernels
from deeplink_gen.render.manifest import MANIFEST_PATH, render_manifest
from deeplink_gen.resolve import ResolvedVendor


def render_vendor(rv: ResolvedVendor, source: str) -> dict[str, str]:
    files = {
        KERNELS_PATH: render_kernels(rv, source),
    }
    files[MANIFEST_PATH] = render_manifest(rv, files, source)
    return files
