"""The edits outside vendor/<name>/ that onboarding a vendor needs
(dipu-vendor.md §10): a checklist and one snippet per edited upstream file."""

from __future__ import annotations

from deeplink_gen.model import Vendor
from deeplink_gen.templating import render

ONBOARDING_DIR = "onboarding"

# Already present upstream at DIPU 9dd38082 (dipu-vendor.md §1, §9.1).
UPSTREAM_ENUM = ("CUDA", "MLU", "NPU", "MUXI", "GCU", "DROPLET", "SUPA", "KLX")
UPSTREAM_VENDORS = ("cuda", "muxi", "camb", "ascend", "topsrider", "supa", "droplet", "kunlunxin")


def render_onboarding(vendor: Vendor, source: str) -> dict[str, str]:
    ident = vendor.identity
    ctx = dict(
        source=source, vendor=vendor, ident=ident, list_name=f"DEVICE_{vendor.name.upper()}",
        enum_upstream=ident.device_type in UPSTREAM_ENUM, vendor_upstream=vendor.name in UPSTREAM_VENDORS,
        has_runtime=vendor.runtime is not None, has_build=vendor.build is not None,
    )
    out = {}
    for name in ("ONBOARDING.md", "dipu_CMakeLists.txt.snippet", "basedef.h.snippet",
                 "vender_helper.hpp.snippet", "diopi_impl_CMakeLists.txt.snippet"):
        out[f"{ONBOARDING_DIR}/{name}"] = render(f"onboarding/{name}.j2", **ctx)
    return out
