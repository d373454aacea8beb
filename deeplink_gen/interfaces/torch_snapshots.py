"""Torch op tables as data: the snapshots shipped in interfaces/data/
(torch-<version>.json.gz, written by `deeplink-gen torch-snapshot`), the
installed torch's table (its snapshot's, when that was taken from the same
native_functions.yaml), and the choice between them and the installed torch
for a requested version.

A snapshot is gzip-compressed JSON: a "//" header line, "format",
"torch_version", "native_functions_sha256", "cpp_optional" (how that torch's
torchgen spells an optional C++ type), "columns" (aten.ROW_FIELDS) and "ops":
op name -> row, keys sorted, one op per line. Format 1 had neither
cpp_optional (its snapshots all come from torchgen that spells c10::optional)
nor the cpu_kernel column."""

from __future__ import annotations

import functools
import json
import zlib
from pathlib import Path

from deeplink_gen import inputfile
from deeplink_gen.errors import Diagnostic, Loc, ParseError, UserError
from deeplink_gen.interfaces import aten
from deeplink_gen.model import OpTable, TorchVersion
from deeplink_gen.input_paths import TORCH_SNAPSHOTS, shipped_torch_snapshots

DATA = TORCH_SNAPSHOTS
FORMAT = 2
# Format 1: no cpu_kernel column, no cpp_optional (taken with torch 2.2 or older).
_FORMAT_1 = {"columns": list(aten.ROW_FIELDS[:-1]), "cpp_optional": "c10::optional"}


def path_of(version: TorchVersion) -> Path:
    return DATA / f"torch-{version}.json.gz"


def shipped() -> list[TorchVersion]:
    """The versions with a snapshot in interfaces/data/, oldest first."""
    return [TorchVersion.parse(v) for v in shipped_torch_snapshots()]


def unpacked(data: bytes) -> bytes:
    """*data*, decompressed when gzip-compressed; ValueError when it is corrupt, cut short or
    more than inputfile.MAX_BYTES decompressed (a small file can hold gigabytes of zeros)."""
    if data[:2] != b"\x1f\x8b":
        return data
    inflate = zlib.decompressobj(wbits=31)      # 31: gzip's header and trailer, its CRC checked
    try:
        out = inflate.decompress(data, inputfile.MAX_BYTES + 1)
    except zlib.error as exc:
        raise ValueError(f"corrupt gzip data ({exc})") from None
    if len(out) > inputfile.MAX_BYTES:
        raise ValueError(f"larger than {inputfile.MAX_BYTES // (1024 * 1024)} MiB decompressed")
    if not inflate.eof:
        raise ValueError("gzip data cut short")
    return out


def decode(data: bytes, where: str) -> dict:
    """A snapshot's JSON document (gzip-compressed or not); UserError when it is not one."""
    try:
        doc = json.loads(unpacked(data).decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise UserError([Diagnostic(Loc(where), None, f"not a torch op snapshot: {exc}")]) from None
    if isinstance(doc, dict) and doc.get("format") == 1 and doc.get("columns") == _FORMAT_1["columns"]:
        doc = {**doc, "cpp_optional": _FORMAT_1["cpp_optional"]}
    elif not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("ops"), dict) \
            or doc.get("columns") != list(aten.ROW_FIELDS) or not isinstance(doc.get("cpp_optional"), str):
        raise UserError([Diagnostic(Loc(where), None, f"not a torch op snapshot of format {FORMAT} "
                                                      f"(columns {', '.join(aten.ROW_FIELDS)})")])
    return doc


def read(path: Path) -> OpTable:
    """The op table a snapshot file holds."""
    doc = decode(inputfile.read(path), str(path))
    try:
        version = TorchVersion.parse(str(doc.get("torch_version", "")))
        spelling = doc["cpp_optional"]
        ops = aten.ops_from_rows(doc["ops"], spelling if spelling != aten.optional_spelling() else None)
    except (ParseError, ValueError, TypeError) as exc:
        raise UserError([Diagnostic(Loc(str(path)), None, f"broken torch op snapshot: {exc}")]) from None
    return OpTable(version, ops, f"the shipped snapshot {path.name}", snapshot=True)


@functools.lru_cache(maxsize=8)
def load(version: TorchVersion) -> OpTable:
    """The shipped snapshot of exactly *version*."""
    return read(path_of(version))


@functools.lru_cache(maxsize=1)
def installed() -> OpTable:
    """The installed torch's op table. When a shipped snapshot was taken from
    this very native_functions.yaml (same sha256) it is that snapshot's rows,
    which saves building the index through torchgen on a first run; otherwise
    aten builds it (and caches it on disk)."""
    version = aten.installed_torch_version()
    path = path_of(version)
    if path.is_file():
        doc = decode(inputfile.read(path), str(path))
        if doc.get("format") == FORMAT and doc.get("native_functions_sha256") == aten.native_functions_digest():
            return OpTable(version, aten.ops_from_rows(doc["ops"]), "the installed torch")
    return aten.installed_table()


def matches(version: TorchVersion, text: str) -> bool:
    """Whether *version* is the one *text* asks for: major.minor, and the
    patch level too when *text* gives one (``2.1`` admits 2.1.1, ``2.1.0`` does not)."""
    wanted = TorchVersion.parse(text)
    exact = text.strip().split("+")[0].count(".") >= 2
    return (version.major, version.minor) == (wanted.major, wanted.minor) and (not exact or version.patch == wanted.patch)


def available() -> str:
    """What versions can be asked for, for messages."""
    listed = ", ".join(str(v) for v in shipped()) or "none"
    return f"the installed torch is {aten.installed_torch_version()}; snapshots are shipped for {listed}"


def choose(text: str) -> OpTable:
    """The op table for a requested version: the installed torch's when it is
    that version, else the newest shipped snapshot that is. Raises ParseError
    with a message naming what is available."""
    TorchVersion.parse(text)
    if matches(aten.installed_torch_version(), text):
        return installed()
    candidates = [v for v in shipped() if matches(v, text)]
    if not candidates:
        raise ParseError(f"no op table for torch {text.strip()}: {available()}")
    return load(candidates[-1])
