"""render --shards N: the kernels split into N translation units.

The rule (deeplink_gen/render/kernels.py shard_of): an op goes to the shard
with the highest sha1("<op>#<i>") -- rendezvous hashing on the op name alone.
So adding or removing an op never moves another one, going from N to N+1
shards only moves ops into the new shard, and shards are balanced
statistically: for the bundled vendors and N <= 4 the largest shard has at
most BALANCE times the lines of the smallest."""

from __future__ import annotations

import difflib
import json
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from helpers import BUNDLED_VENDORS, KERNELS, REPO, edit, run_cli, syntax_check
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
    assert sorted(p.name for p in out.iterdir() if p.suffix != ".inc") == ["AutoGenedKernels.cmake", *names]
    # A shard includes its .pasted.inc (the C++ its ops' entries give) when it has one, and only then.
    for name in names:
        included = re.findall(r'^#define DEEPLINK_GEN_PASTED "([^"]+)"$', (out / name).read_text(), re.M)
        pasted = out / name.replace(".cpp", ".pasted.inc")
        assert included == ([pasted.name] if pasted.exists() else []), name
    assert any((out / n.replace(".cpp", ".pasted.inc")).exists() for n in names)
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


def _files(ws: Path) -> dict[str, list[str]]:
    out = ws / "generated" / "camb" / OPS_DIR
    return {p.name: p.read_text().splitlines() for p in sorted(out.iterdir())}


def _changes(before: dict[str, list[str]], after: dict[str, list[str]]) -> dict[str, list[str]]:
    """The lines each changed file lost (-) and gained (+)."""
    changed = {}
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name, []), after.get(name, [])
        if old != new:
            diff = difflib.unified_diff(old, new, lineterm="", n=0)
            changed[name] = [d for d in diff if d[:1] in "+-" and d[:3] not in ("+++", "---")]
    return changed


def test_a_one_op_edit_changes_that_ops_lines_only(tmp_path: Path):
    """A line added to one op's custom code in the middle of a catalog file, or autocompare
    turned on for one op in the vendor file, changes that op's lines in its shard's files and
    nothing else: no line number of any other op's pasted C++ moves, though theirs sit below the
    edit in the same files, so no other shard recompiles."""
    ws = copy_workspace(tmp_path)
    vendor = ws / "vendors" / "camb.yaml"
    # A vendor replacement below the vendor edit, with C++ of its own.
    edit(vendor, "\n# DIOPI dtypes and layouts", "\n  abs.out:\n    replace:\n      call: diopiAbs(ctx, out, self)\n"
         "      code:\n        beginning: |\n          (void)self;\n\n# DIOPI dtypes and layouts")
    shards = shards_of(render(ws, "camb", "--shards", "8"))
    before = _files(ws)
    catalog = ws / "catalog" / "pointwise.yaml"
    # Other shards paste C++ from ops written below add.out in the same file.
    assert [name for name, text in before.items() if "catalog/pointwise.yaml" in "\n".join(text)
            and f"_{shards['add.out']}." not in name]
    edit(catalog, "          return dipu_add_scalar_out(self, other.item(), alpha, out);\n",
         "          return dipu_add_scalar_out(self, other.item(), alpha, out);\n          // one line more\n")
    render(ws, "camb", "--shards", "8")
    after = _files(ws)
    assert _changes(before, after) == {f"AutoGenedKernels_{shards['add.out']}.pasted.inc": ["+  // one line more"]}

    edit(vendor, "\nops:\n", "\nops:\n  sub.out:\n    autocompare: true\n")
    render(ws, "camb", "--shards", "8")
    changes = _changes(after, _files(ws))
    assert list(changes) == [f"AutoGenedKernels_{shards['sub.out']}.cpp"]
    (lines,) = changes.values()
    # The twin and the register macro that names it; nothing renumbered.
    assert len(lines) <= 40 and not any("#line" in line for line in lines), lines
    assert [line for line in lines if line.startswith("-")] == [
        '-    NO_CUSTOMFALLBACK_NO_AUTOCOMPARE_REGISTER("sub.out", diopiSub_and_diopiSubScalar, '
        'dipu::native::dipu_sub_out);']


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
    render(ws, "camb", "--shards", "1")
    result = run_cli("render", "--vendor", "camb", "--shards", "2", "--check", cwd=ws)
    assert result.exit_code == 1
    assert f"unexpected: camb/{KERNELS}" in result.stderr
    assert f"missing: camb/{OPS_DIR}/AutoGenedKernels_0.cpp" in result.stderr
    result = run_cli("render", "--vendor", "camb", "--shards", "2", cwd=ws)
    # The one file and its .pasted.inc.
    assert result.exit_code == 0 and "2 removed" in result.output, result.output
    assert not (ws / "generated" / "camb" / KERNELS).exists()
    assert not (ws / "generated" / "camb" / OPS_DIR / "AutoGenedKernels.pasted.inc").exists()
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
