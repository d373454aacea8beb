"""The runtime patterns: recurring shapes of a DIPU function's body that a
vendor names with `pattern: <tag>` instead of writing the body in C++. Each
pattern is one row of PATTERNS, and every stage reads that row rather than
knowing the pattern itself: load takes the tag, validate checks an entry
against the row (the functions it fits, what it must write, what its checker
must report, the fields and keys it may set), and the plan expands the body
from it (the names the body declares, the parameters it names, the call
diopi_test reuses). The body's C++ is the pattern's one block in
templates/runtime/function.j2, chosen by the plan. So a new pattern is a row
here (and its tag in the vendor schema's enum), its body in the plan and its
block in the template."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Pattern(Enum):
    STREAM_PRIORITY = "stream_priority"
    SET_DEVICE = "set_device"
    NOT_NULL = "not_null"
    QUERY = "query"
    QUERY_STATUS = "query_status"
    MALLOC = "malloc"
    PEER_COPY = "peer_copy"
    STRUCT = "struct"
    VERSION = "version"


class Part(Enum):
    """A part of a pattern's entry, as messages name it: its call (or calls),
    its fields, or a call template written under its own key."""

    CALL = "call"
    FIELDS = "fields"
    CALL_OR_FIELDS = "call or fields"
    WITH_PRIORITY = "with_priority"
    PLAIN = "plain"
    SAME_DEVICE = "same_device"
    PEER = "peer"


# The parts written under their own key, in the order an entry keeps them.
TEMPLATE_PARTS = (Part.WITH_PRIORITY, Part.PLAIN, Part.SAME_DEVICE, Part.PEER)
# What a version pattern fills in (and what its body declares, so its calls may set them).
VERSION_FIELDS = ("major", "minor", "patch")


@dataclass(frozen=True)
class CheckerNeed:
    """What the checker of a pattern's call must report, and how a message says it."""

    attribute: str          # a field of model.runtime.Checker
    said: str


@dataclass(frozen=True)
class Fields:
    """The fields a pattern's `fields:` may set, and how messages name their owner.
    No names: the fields of the DIPU struct the function returns, named by its type."""

    names: tuple[str, ...] = ()
    owner: str | None = None


@dataclass(frozen=True)
class Use:
    """A parameter a pattern's body names itself, always or only when *when* is written."""

    param: str
    when: Part | None = None


@dataclass(frozen=True)
class PatternRule:
    functions: tuple[str, ...]              # the DIPU functions (keys) it fits
    needs: Part | None = None               # what the entry must write
    checker: CheckerNeed | None = None      # its call must be checked, by a checker that reports this
    fields: Fields | None = None            # None: it sets no fields
    own_keys: tuple[str, ...] = ()          # keys of an entry that only this pattern reads
    status: bool = False                    # it needs status_type: and ready:
    declares: tuple[str, ...] = ()          # names its body declares, which its templates may use
    uses: tuple[Use, ...] = ()              # parameters its body names besides its templates
    diopi_test: Part | None = None          # the call diopi_test reuses (CALL: the first call)


_QUERIES = ("isStreamEmpty", "getEventStatus")

PATTERNS = {
    Pattern.STREAM_PRIORITY: PatternRule(
        ("createStream",), needs=Part.PLAIN, uses=(Use("prior", when=Part.WITH_PRIORITY),),
        diopi_test=Part.PLAIN),
    Pattern.SET_DEVICE: PatternRule(
        ("destroyStreamOnDevice", "resetDevice"), needs=Part.CALL, uses=(Use("devId"),)),
    Pattern.NOT_NULL: PatternRule(("streamNotNull",), own_keys=("sentinels",), uses=(Use("stream"),)),
    Pattern.QUERY: PatternRule(_QUERIES, needs=Part.CALL, checker=CheckerNeed("not_ready", "not_ready codes")),
    Pattern.QUERY_STATUS: PatternRule(
        _QUERIES, needs=Part.CALL, own_keys=("ready", "status_type"), status=True, declares=("status",)),
    Pattern.MALLOC: PatternRule(
        ("mallocDevice",), needs=Part.CALL, checker=CheckerNeed("out_of_memory", "out_of_memory"),
        uses=(Use("throwExcepion"),), diopi_test=Part.CALL),
    Pattern.PEER_COPY: PatternRule(
        ("memCopyD2D", "memCopyD2DAsync"), needs=Part.SAME_DEVICE, uses=(Use("dstDevId"), Use("srcDevId")),
        diopi_test=Part.SAME_DEVICE),
    Pattern.STRUCT: PatternRule(
        ("getDeviceProperties", "getDeviceStatus"), needs=Part.FIELDS, fields=Fields(), own_keys=("set",)),
    Pattern.VERSION: PatternRule(
        ("getDriverVersion", "getRuntimeVersion"), needs=Part.CALL_OR_FIELDS,
        fields=Fields(VERSION_FIELDS, "a version"), declares=VERSION_FIELDS, uses=(Use("version"),)),
}
