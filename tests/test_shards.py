"""render --shards N: the kernels split into N translation units.

The rule (deeplink_gen/render/kernels.py shard_of): an op goes to the shard
with the highest sha1("<op>#<i>") -- rendezvous hashing on the op name alone.
So adding or removing an op never moves another one, going from N to N+1
shards only moves ops into the new shard, and shards are balanced
statistically: for the bundled vendors and N <= 4 the largest shard has at
most BALANCE times the lines of the smallest."""

from __future__ import annotations

import json
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import BUNDLED_VENDORS, KERNELS, REPO, run_cli, syntax_check
from helpers import copy_workspace as copy_bundled_workspace

OPS_DIR = "dipu/torch_dipu/csrc_dipu/aten/ops"
BALANCE = 1.6
FEATURES = REPO / "tests" / "fixtures" / "kernels" / "features"


def copy_workspace(tmp_path: Path, source: Path | None = None) -> Path:
    if source is None:
        return copy_bundled_workspace(tmp_path / "ws")
    ws = tmp_path / "ws"
    shutil.copytree(source, ws)
    return ws


def render(ws: Path, vendor: str, *args: str) -> dict:
    result = run_cli("render", "--vendor", vendor, *args, cwd=ws)
    assert result.exit_code == 0, result.output
    return json.loads((ws / "generated" / vendor / "manifest.json").read_text())


def shards_of(manifest: dict) -> dict[str, int]:
    return {o["op"]: o["shard"] for o in manifest["ops"] if o["shard"] is not None}


def test_shard_files_and_manifest(tmp_path: Path):
    ws = copy_workspace(tmp_path)
    manifest = render(ws, "camb", "--shards", "3")
    out = ws / "generated" / "camb" / OPS_DIR
    names = [f"AutoGenedKernels_{i}.cpp" for i in range(3)]
    assert sorted(p.name for p in out.iterdir()) == ["AutoGenedKernels.cmake", *names]
    # The list DIPU's build includes (onboarding/dipu.patch) names exactly the shards.
    listed = re.findall(r'"\$\{CMAKE_CURRENT_LIST_DIR\}/([^"]+)"', (out / "AutoGenedKernels.cmake").read_text())
    assert listed == names
    kernels = manifest["kernels"]
    assert kernels["shards"] == 3
    assert [f["path"] for f in kernels["files"]] == [f"{OPS_DIR}/AutoGenedKernels_{i}.cpp" for i in range(3)]
    assert {f["path"] for f in kernels["files"]} <= {f["path"] for f in manifest["files"]}
    texts = [(out / f"AutoGenedKernels_{i}.cpp").read_text() for i in range(3)]
    enabled = [o for o in manifest["ops"] if o["enabled"]]
    assert sum(f["ops"] for f in kernels["files"]) == len(enabled)
    for o in enabled:
        # Each wrapper is defined, and registered, in exactly the shard the manifest names.
        # (a definition ends in '{'; other shards may declare it, ending in ';', to call it)
        defined = [i for i, t in enumerate(texts) if re.search(rf"^\S.* {o['wrapper']}\(.*\) \{{$", t, re.M)]
        registered = [i for i, t in enumerate(texts) if f'_REGISTER("{o["op"]}",' in t]
        assert defined == [o["shard"]], o["op"]
        assert registered == ([o["shard"]] if o["flags"]["register"] else []), o["op"]
    for t in texts:
        # Every shard registers its own ops in its own block, with internal linkage.
        assert t.count("DIPU_LIBRARY_IMPL(aten, DIPU_DEVICE_TYPE_MACRO, library)") == 1
        before = t[:t.index("DIPU_LIBRARY_IMPL(")]
        assert before.rindex("\nnamespace {\n") > before.rindex("}  // namespace\n")


def test_assignment_is_stable(tmp_path: Path):
    ws = copy_workspace(tmp_path)
    before = shards_of(render(ws, "camb", "--shards", "4"))
    # Add an op to the catalog: no other op moves.
    catalog = ws / "catalog" / "pointwise.yaml"
    catalog.write_text(catalog.read_text() + "  absolute.out:\n    call: diopiAbs(ctx, out, self)\n")
    after = shards_of(render(ws, "camb", "--shards", "4"))
    assert set(after) == set(before) | {"absolute.out"}
    assert {op: after[op] for op in before} == before
    # Remove it again and remove another op: still nobody moves.
    text = catalog.read_text().replace("  absolute.out:\n    call: diopiAbs(ctx, out, self)\n", "")
    victim = next(iter(before))
    vendor = ws / "vendors" / "camb.yaml"
    vendor.write_text(vendor.read_text().replace("\nops:\n", f"\nops:\n  {victim}: {{enabled: false}}\n", 1)
                      if "\nops:\n" in vendor.read_text() else vendor.read_text() + f"ops:\n  {victim}: {{enabled: false}}\n")
    catalog.write_text(text)
    removed = shards_of(render(ws, "camb", "--shards", "4"))
    assert set(removed) == set(before) - {victim}
    assert all(removed[op] == before[op] for op in removed)
    # One more shard: ops only move into the new one.
    grown = shards_of(render(ws, "camb", "--shards", "5"))
    moved = {op for op in removed if grown[op] != removed[op]}
    assert moved and all(grown[op] == 4 for op in moved)
    assert len(moved) < len(removed) / 3


@pytest.mark.parametrize("vendor", BUNDLED_VENDORS)
def test_shards_are_balanced(tmp_path: Path, vendor: str):
    ws = copy_workspace(tmp_path)
    for n in (2, 3, 4):
        manifest = render(ws, vendor, "--shards", str(n))
        lines = [f["lines"] for f in manifest["kernels"]["files"]]
        assert len(lines) == n and min(lines) > 0
        assert max(lines) <= BALANCE * min(lines), (n, lines)


def test_check_reports_the_single_file_left_behind(tmp_path: Path):
    ws = copy_workspace(tmp_path)
    render(ws, "camb")
    result = run_cli("render", "--vendor", "camb", "--shards", "2", "--check", cwd=ws)
    assert result.exit_code == 1
    assert f"unexpected: camb/{KERNELS}" in result.stderr
    assert f"missing: camb/{OPS_DIR}/AutoGenedKernels_0.cpp" in result.stderr
    result = run_cli("render", "--vendor", "camb", "--shards", "2", cwd=ws)
    assert result.exit_code == 0 and "1 removed" in result.output, result.output
    assert not (ws / "generated" / "camb" / KERNELS).exists()
    assert run_cli("render", "--vendor", "camb", "--shards", "2", "--check", cwd=ws).exit_code == 0
    # A plain --check checks with the recorded --shards 2; asking for one file, the shards are leftovers.
    assert run_cli("render", "--vendor", "camb", "--check", cwd=ws).exit_code == 0
    result = run_cli("render", "--vendor", "camb", "--shards", "1", "--check", cwd=ws)
    assert result.exit_code == 1 and f"unexpected: camb/{OPS_DIR}/AutoGenedKernels_1.cpp" in result.stderr


def test_vendor_default_and_precedence(tmp_path: Path):
    ws = copy_workspace(tmp_path)
    vendor = ws / "vendors" / "camb.yaml"
    vendor.write_text(vendor.read_text().replace("\ndefaults:\n", "\ndefaults:\n  shards: 3\n", 1))
    assert render(ws, "camb")["kernels"]["shards"] == 3                      # vendor > built-in
    assert render(ws, "camb", "--shards", "2")["kernels"]["shards"] == 2     # command line > vendor
    out = run_cli("explain", "add.out", "--vendor", "camb", cwd=ws).output
    assert re.search(r"shard\s+\d of 3: AutoGenedKernels_\d\.cpp \(shards: from vendor default \(\S*camb\.yaml:\d+:\d+\)\)",
                     out), out
    vendor.write_text(vendor.read_text().replace("  shards: 3\n", "  shards: 0\n"))
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 1 and re.search(r"camb\.yaml:\d+:\d+: error: defaults\.shards", result.stderr)
    assert run_cli("render", "--vendor", "camb", "--shards", "0", cwd=ws).exit_code == 2


def test_sharded_kernels_compile(tmp_path: Path):
    """Two shards of camb, and the feature workspace split so that an autograd
    op and its backward wrapper land in different shards; compiled two at a
    time with -Werror."""
    camb = copy_workspace(tmp_path / "camb")
    render(camb, "camb", "--shards", "2")
    features = copy_workspace(tmp_path / "features", FEATURES)
    manifest = render(features, "droplet", "--shards", "2")
    where = shards_of(manifest)
    assert where["conv_transpose2d.input"] != where["convolution_transpose_backward"]
    second = (features / "generated" / "droplet" / OPS_DIR / f"AutoGenedKernels_{where['conv_transpose2d.input']}.cpp")
    assert "// Wrappers this shard's custom code and autograd functions call.\n" in second.read_text()
    sources = sorted((camb / "generated" / "camb" / OPS_DIR).glob("*.cpp"))
    sources += sorted((features / "generated" / "droplet" / OPS_DIR).glob("*.cpp"))
    assert len(sources) == 4
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda s: syntax_check(s, warnings=["-Wall", "-Wextra", "-Werror"]), sources))
    for source, result in zip(sources, results):
        assert result.returncode == 0, (source, result.stderr[-6000:])


def test_each_shard_defines_the_helpers_it_calls_once(tmp_path: Path):
    """The wrappers' shared helpers are defined once per translation unit, not
    per wrapper, and only in the shards whose wrappers call them (an unused one
    is dead code, which the -Werror compiles above would also reject)."""
    ws = copy_workspace(tmp_path, FEATURES)
    render(ws, "droplet", "--shards", "4")
    definitions = {"diopi_call_failure": "std::string diopi_call_failure(", "on_dipu_or_ignored": "bool on_dipu_or_ignored("}
    called_somewhere = set()
    for source in sorted((ws / "generated" / "droplet" / OPS_DIR).glob("*.cpp")):
        text = source.read_text()
        wrappers = len(re.findall(r"^// \S+\(.*\) -> ", text, re.M))
        for name, definition in definitions.items():
            defined = text.count(definition)
            calls = text.count(name + "(") - defined
            if calls:
                called_somewhere.add(name)
            # One definition, or two overloads (tensor, optional tensor) of the device check.
            assert (defined == 0) == (calls == 0) and defined <= (2 if name == "on_dipu_or_ignored" else 1), \
                (source.name, name, defined, calls)
        assert text.count("diopi_call_failure(") - 1 == wrappers > 0, source.name
    assert called_somewhere == set(definitions)
