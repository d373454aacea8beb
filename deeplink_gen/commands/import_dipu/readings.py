"""How DIPU's generator reads the values of its op config."""

from __future__ import annotations

from typing import Any


def true_like(value: Any) -> bool:
    """`True` or `"True"` (custom_fallback, dummy_call_diopi)."""
    return value is True or value == "True"


def on_unless_false(value: Any) -> bool:
    """Everything but False/"False" is on (generate_device_guard, force_fallback)."""
    return not (value is False or value == "False")


def device_kept(devices: list, vendor: str) -> bool:
    """(vendor or 'all' listed) and '-vendor' not listed."""
    return (vendor in devices or "all" in devices) and f"-{vendor}" not in devices


def torch_kept(versions: list, current: str) -> bool:
    """An exact string compare with the 5-digit version."""
    if f"-{current}" in versions:
        return False
    return "all" in versions or current in versions


def torch_gate(versions: list, current: str) -> str | None:
    """The deeplink-gen torch: gate for a torch_ver list that selects *current*
    (None: no gate). [all, -X, ...] excludes each X; a list of versions is read
    by membership, and admits the one imported for (a torch: gate is one
    conjunction, so ["20100", "20101", "20202"] cannot be written whole)."""
    def dotted(code: str) -> str:
        return f"{int(code[:-4])}.{int(code[-4:-2])}.{int(code[-2:])}"
    if "all" not in versions:
        return f"=={dotted(current)}"
    excludes = [v[1:] for v in versions if v.startswith("-")]
    return ",".join(f"!={dotted(x)}" for x in excludes) or None
