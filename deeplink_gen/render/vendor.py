"""Render every artifact of one vendor into memory: {relative path: text}."""

from __future__ import annotations

from deeplink_gen.render.adaptor import render_adaptor
from deeplink_gen.render.convert_config import render_convert_config
from deeplink_gen.render.kernels import render_kernels
from deeplink_gen.render.testconfig import render_testconfig
from deeplink_gen.render.manifest import MANIFEST_PATH, render_manifest
from deeplink_gen.render.runtime import render_runtime_tree
from deeplink_gen.resolve import ResolvedVendor


def render_vendor(rv: ResolvedVendor, source: str) -> dict[str, str]:
    # AutoGenedKernels.cpp, or its shards AutoGenedKernels_<i>.cpp (render --shards).
    files = dict(render_kernels(rv, source))
    files.update(render_runtime_tree(rv.vendor, source))
    # DIOPI adaptor + convert_config.yaml (only for vendors with a dtypes/layouts section),
    # diopi_test device_configs.py and DIPU's pytorch_config_<type>.py.
    conversion_files = render_convert_config(rv, source)
    if conversion_files:
        files.update(render_adaptor(rv, source))
        files.update(conversion_files)
    files.update(render_testconfig(rv, source))
    files[MANIFEST_PATH] = render_manifest(rv, files, source)
    return files
