"""The onboarding plan: the edits DIPU and DIOPI need outside the vendor
folder, and which of them upstream already has for this vendor."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.interfaces.dipu import UPSTREAM_DEVICE_TYPES, UPSTREAM_VENDORS
from deeplink_gen.model import Vendor, VendorIdentity


@dataclass(frozen=True)
class Edit:
    number: int
    snippet: str              # the snippet file in onboarding/
    status: bool | None       # True: present upstream, False: to do, None: depends on the DIOPI checkout


@dataclass(frozen=True)
class OnboardingPlan:
    ident: VendorIdentity
    list_name: str            # the DEVICE_* alias list in dipu/CMakeLists.txt
    enum_upstream: bool       # DIPU's VendorDeviceType already has the enumerator
    vendor_upstream: bool     # DIPU already knows the vendor folder
    has_runtime: bool
    has_build: bool
    rows: tuple[Edit, ...]


def plan_onboarding(vendor: Vendor) -> OnboardingPlan:
    ident = vendor.identity
    enum_upstream = ident.device_type in UPSTREAM_DEVICE_TYPES
    vendor_upstream = vendor.name in UPSTREAM_VENDORS
    rows = (
        Edit(1, "dipu_CMakeLists.txt.snippet", vendor_upstream),
        Edit(2, "dipu_CMakeLists.txt.snippet", vendor_upstream),
        Edit(3, "basedef.h.snippet", enum_upstream),
        Edit(4, "vender_helper.hpp.snippet", vendor_upstream),
        Edit(5, "vender_helper.hpp.snippet", enum_upstream),
        Edit(6, "diopi_impl_CMakeLists.txt.snippet", None),
    )
    return OnboardingPlan(ident, f"DEVICE_{vendor.name.upper()}", enum_upstream, vendor_upstream,
                          vendor.runtime is not None, vendor.build is not None, rows)
