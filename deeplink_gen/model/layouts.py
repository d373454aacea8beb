"""A vendor's layouts section: which memory layouts its DIOPI functions
prefer, per function and per tensor argument, and how DIPU reads a layout
string for the memory-format placeholders of custom code."""

from __future__ import annotations

from dataclasses import dataclass

from deeplink_gen.errors import Loc
from deeplink_gen.model.common import Located

# Layout token -> diopiMemoryFormat_t enumerator.
LAYOUTS = {
    "NCHW": "Contiguous", "NCL": "Contiguous", "NCDHW": "Contiguous",
    "NHWC": "ChannelsLast", "NLC": "ChannelsLast1d", "NDHWC": "ChannelsLast3d",
    "ND": "Preserve",
}


def memory_format_of(layout: str) -> str:
    """DIPU's reading of a convert_config.yaml layout string for memory-format
    placeholders: a substring test, NCHW first (so NCL and NCDHW read as
    preserve), then NLC/NHWC/NDHWC as channels_last, anything else preserve."""
    if "NCHW" in layout:
        return "contiguous"
    if any(t in layout for t in ("NLC", "NHWC", "NDHWC")):
        return "channels_last"
    return "preserve"


@dataclass(frozen=True)
class FunctionLayouts:
    function: str
    loc: Loc
    prefer: Located[tuple[str, ...]] | None = None
    tensors: tuple[tuple[str, Located[tuple[str, ...]]], ...] = ()
    contiguous: tuple[Located[str], ...] = ()


@dataclass(frozen=True)
class LayoutRules:
    default: Located[str] | None = None
    functions: tuple[FunctionLayouts, ...] = ()

    def of(self, function: str) -> FunctionLayouts | None:
        return next((f for f in self.functions if f.function == function), None)

    def layouts(self, function: str, tensor: str | None = None) -> tuple[str, ...]:
        f = self.of(function)
        if f is not None:
            if tensor is not None:
                for name, located in f.tensors:
                    if name == tensor:
                        return located.value
                if any(c.value == tensor for c in f.contiguous):
                    return ("NCHW",)
            if f.prefer is not None:
                return f.prefer.value
        return (self.default.value,) if self.default is not None else ()

    def function_layouts(self, function: str) -> tuple[str, ...]:
        """The function-level layout list (what convert_config.yaml and DIPU see)."""
        f = self.of(function)
        if f is not None and f.prefer is not None:
            return f.prefer.value
        return ()

    def memory_format(self, function: str) -> tuple[str, Loc, str] | None:
        """(memory format, where stated, which rule) for *function*'s
        placeholders, as DIPU reads convert_config.yaml; None: no layout stated."""
        tokens = self.function_layouts(function)
        if tokens:
            return memory_format_of(",".join(tokens)), self.of(function).loc, f"vendor layouts for {function}"
        if self.default is not None:
            return memory_format_of(self.default.value), self.default.loc, "vendor default layout"
        return None
