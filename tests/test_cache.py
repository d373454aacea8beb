"""The caches never serve a stale result: with a warm cache, a render after a
change of any input (vendor file, catalog, hand-written sources, DIOPI
headers, options, deeplink-gen's own templates) gives what a render without
any cache gives; broken or deleted cache entries are misses, and
DEEPLINK_GEN_NO_CACHE=1 keeps the cache directory untouched."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import KERNELS, REPO, diopi_include, edit, error_lines, line_of, run_cli, run_subprocess

ADAPTOR = "dipu/third_party/DIOPI/impl/camb/adaptor/impl_functions.hpp"


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    """A cache directory of this test's own."""
    path = tmp_path / "cache"
    monkeypatch.setenv("DEEPLINK_GEN_CACHE_DIR", str(path))
    monkeypatch.delenv("DEEPLINK_GEN_NO_CACHE", raising=False)
    return path


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def render(ws: Path, out: Path, *args: str) -> dict[str, bytes]:
    result = run_cli("render", "--vendor", "camb", *args, "--out", str(out), "--allow-outside-workspace", cwd=ws)
    assert result.exit_code == 0, result.output
    return tree(out / "camb")


def uncached(ws: Path, tmp_path: Path, monkeypatch, *args: str) -> dict[str, bytes]:
    """What a render without any cache gives."""
    with monkeypatch.context() as m:
        m.setenv("DEEPLINK_GEN_NO_CACHE", "1")
        fresh = tmp_path / "uncached"
        shutil.rmtree(fresh, ignore_errors=True)
        return render(ws, fresh, *args)


def stored(cache: Path, kind: str) -> list[Path]:
    return [p for p in cache.glob(f"store-*/{kind}/**/*") if p.is_file()]


def assert_not_stale(ws: Path, tmp_path: Path, monkeypatch, cache: Path, change, *args: str,
                     changed_args: tuple[str, ...] | None = None) -> dict[str, bytes]:
    """Render with a warm cache, apply *change*, render again: the output
    reflects the change, also when rendered into an empty folder from the
    cache, and equals an uncached render."""
    out = tmp_path / "out"
    before = render(ws, out, *args)
    assert stored(cache, "render") and stored(cache, "model")
    shutil.rmtree(out)
    assert render(ws, out, *args) == before          # served from the cache
    change()
    after_args = args if changed_args is None else changed_args
    after = render(ws, out, *after_args)
    assert after != before
    shutil.rmtree(out)
    assert render(ws, out, *after_args) == after
    assert after == uncached(ws, tmp_path, monkeypatch, *after_args)
    return after


def test_vendor_file_edit(workspace, tmp_path, monkeypatch, cache):
    after = assert_not_stale(workspace, tmp_path, monkeypatch, cache,
                             lambda: edit(workspace / "vendors" / "camb.yaml", "device_type: MLU", "device_type: MLU2"))
    assert b'"device_type": "MLU2"' in after["manifest.json"]


def test_catalog_edit(workspace, tmp_path, monkeypatch, cache):
    assert_not_stale(workspace, tmp_path, monkeypatch, cache, lambda: edit(
        workspace / "catalog" / "pointwise.yaml", "call: diopiAdd(ctx, out, self, other, alpha)",
        "call: diopiAdd(ctx, out, other, self, alpha)"))


def test_hand_written_source_edit(workspace, tmp_path, monkeypatch, cache):
    source = workspace / "vendors" / "camb" / "extra.h"
    source.parent.mkdir()
    source.write_text("// first\n")
    after = assert_not_stale(workspace, tmp_path, monkeypatch, cache, lambda: source.write_text("// second\n"))
    assert [rel for rel, data in after.items() if data == b"// second\n"]


def test_diopi_include_edit(workspace, tmp_path, monkeypatch, cache):
    include = tmp_path / "include"
    shutil.copytree(diopi_include(), include)
    header = include / "diopi" / "functions.h"
    monkeypatch.setenv("DEEPLINK_GEN_DIOPI_INCLUDE", str(include))
    after = assert_not_stale(workspace, tmp_path, monkeypatch, cache, lambda: edit(
        header, "diopiAbs(diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t input)",
        "diopiAbs(diopiContextHandle_t ctx, diopiTensorHandle_t out, diopiConstTensorHandle_t x)"))
    assert b"diopiConstTensorHandle_t x)" in after[ADAPTOR]


def test_diopi_include_folder_change(workspace, tmp_path, monkeypatch, cache):
    include = tmp_path / "include"
    shutil.copytree(diopi_include(), include)
    edit(include / "diopi" / "functions.h", "diopiConstTensorHandle_t input)", "diopiConstTensorHandle_t y)")
    out = tmp_path / "out"
    bundled = render(workspace, out)
    given = run_cli("--diopi-include", str(include), "render", "--vendor", "camb", "--out", str(out),
                    "--allow-outside-workspace", cwd=workspace)
    assert given.exit_code == 0, given.output
    assert tree(out / "camb") != bundled


@pytest.mark.parametrize("before, after", [(("--no-autocompare",), ("--autocompare",)),
                                           ((), ("--shards", "2"))])
def test_option_change(workspace, tmp_path, monkeypatch, cache, before, after):
    assert_not_stale(workspace, tmp_path, monkeypatch, cache, lambda: None, *before, changed_args=after)


def test_a_second_output_folder_reuses_the_stored_render(workspace, tmp_path, cache):
    """The rendered files do not depend on the folder they go into: the render stored for one folder
    serves another (the stamps, which say what is on disk, are kept per folder)."""
    first = render(workspace, tmp_path / "a")
    assert len(stored(cache, "render")) == 1 and len(stored(cache, "stamps")) == 1
    assert render(workspace, tmp_path / "b") == first
    assert len(stored(cache, "render")) == 1 and len(stored(cache, "stamps")) == 2


def test_template_change_in_a_copy_of_the_package(workspace, tmp_path, cache):
    """deeplink-gen's own files are part of every key: a changed template is
    used at once, though the workspace and options are the same."""
    package = tmp_path / "package"
    shutil.copytree(REPO / "deeplink_gen", package / "deeplink_gen",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "schemas", package / "schemas")
    env = {"PYTHONPATH": str(package), "DEEPLINK_GEN_CACHE_DIR": str(cache)}
    out = tmp_path / "out"

    def render_copy() -> dict[str, bytes]:
        result = run_subprocess("-C", str(workspace), "render", "--vendor", "camb", "--shards", "1",
                                "--out", str(out), "--allow-outside-workspace",
                                env=env, cwd=tmp_path)   # -m imports from cwd first
        assert result.returncode == 0, result.stderr
        return tree(out / "camb")

    before = render_copy()
    shutil.rmtree(out)
    assert render_copy() == before
    templates = sorted((package / "deeplink_gen" / "templates" / "kernels").glob("*.j2"))
    assert templates
    for template in templates:
        template.write_text(template.read_text() + "// template edited\n")
    after = render_copy()
    assert b"// template edited\n" in after[KERNELS]
    assert after != before


def test_templates_come_compiled_from_the_build_and_render_as_their_source(workspace, tmp_path, cache):
    """The install compiled the templates (hatch_build.py). A package whose compiled templates match
    its templates uses them, keeps no compiled code in the cache folder, and renders exactly what the
    templates' source renders in a copy without them."""
    from deeplink_gen.render import precompile

    assert (REPO / "deeplink_gen" / precompile.COMPILED / "sources.json").is_file(), "the build hook did not run"
    renders = {}
    for kind in ("compiled", "source"):
        package = tmp_path / kind
        shutil.copytree(REPO / "deeplink_gen", package / "deeplink_gen",
                        ignore=shutil.ignore_patterns("__pycache__", precompile.COMPILED))
        shutil.copytree(REPO / "schemas", package / "schemas")
        if kind == "compiled":
            precompile.build(package / "deeplink_gen")
        env = {"PYTHONPATH": str(package), "DEEPLINK_GEN_CACHE_DIR": str(cache / kind)}
        probe = subprocess.run([sys.executable, "-c", "from deeplink_gen.render.templating import environment;"
                                "print(type(environment().loader).__name__)"],
                               env={**os.environ, **env}, cwd=tmp_path, capture_output=True, text=True)
        assert probe.stdout.strip() == ("ModuleLoader" if kind == "compiled" else "PackageLoader"), probe.stderr
        result = run_subprocess("-C", str(workspace), "render", "--vendor", "camb", "--out", str(tmp_path / f"out-{kind}"),
                                "--allow-outside-workspace", cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stderr
        assert not [p for p in (cache / kind).rglob("*") if "template" in p.name]
        renders[kind] = tree(tmp_path / f"out-{kind}" / "camb")
    assert renders["compiled"] == renders["source"]


def stored_op_code(cache: Path) -> set[str]:
    """The keys of every op's stored code (render/kernels.py op_code)."""
    from deeplink_gen import codec

    keys = set()
    for path in stored(cache, "op-code"):
        keys |= set(codec.loads(path.read_bytes().partition(b"\n")[2]))
    return keys


def test_op_code_is_reused_unless_its_plan_changed(workspace, tmp_path, cache):
    """Each op's code is stored under the digest of its plan. The same plans
    give the same keys in a process that validated the workspace afresh and
    in one that took it from the cache (--shards 2 renders again from the
    stored model), and an edit of one catalog entry re-renders only the ops
    it changes. Each render is a process of its own, as users run it."""
    def render_process(out: Path, *args: str) -> dict[str, bytes]:
        result = run_subprocess("-C", str(workspace), "render", "--vendor", "camb", *args, "--out", str(out),
                                "--allow-outside-workspace", env={"DEEPLINK_GEN_CACHE_DIR": str(cache)})
        assert result.returncode == 0, result.stderr
        return tree(out / "camb")

    out = tmp_path / "out"
    render_process(out, "--shards", "1")
    first = stored_op_code(cache)
    assert len(first) > 100
    render_process(tmp_path / "sharded", "--shards", "3")
    assert stored_op_code(cache) == first
    edit(workspace / "catalog" / "pointwise.yaml", "call: diopiAdd(ctx, out, self, other, alpha)",
         "call: diopiAdd(ctx, out, other, self, alpha)")
    after = render_process(out, "--shards", "1")
    assert b"diopiAdd(ctx, outDiopiTensorHandle, otherDiopiTensorHandle, selfDiopiTensorHandle" in after[KERNELS]
    changed = stored_op_code(cache) - first
    assert 0 < len(changed) < 10
    # Lines added above every entry of a file move where its C++ is written, not how it is
    # numbered (from each op's entry): no op's code is rendered again.
    before = stored_op_code(cache)
    edit(workspace / "catalog" / "pointwise.yaml", "ops:\n", "ops:\n\n# moved down\n\n")
    assert render_process(out, "--shards", "1")[KERNELS] == after[KERNELS]
    assert stored_op_code(cache) == before


def test_an_edited_op_entry_alone_is_schema_checked_again(workspace, cache):
    """Schema results are kept per file and per `ops` entry: after an edit of one entry, only
    entries that are not as they passed before are checked, so an entry changed in any way
    (here a string turned into a number, which YAML writes alike) is checked again, and one
    recorded as passed is not."""
    from deeplink_gen import cache as store, digests, yamlfile
    from deeplink_gen.load import schema

    catalog = workspace / "catalog" / "pointwise.yaml"
    assert run_cli("validate", cwd=workspace).exit_code == 0
    bad = edit(catalog, "diopiAdd(ctx, out, self, other, alpha)\n    code:", "5\n    code:")
    lines = error_lines(run_cli("validate", cwd=workspace))
    assert len(lines) == 1 and f"pointwise.yaml:{line_of(catalog, 'call: 5')}:" in lines[0], lines
    edit(catalog, "call: 5", "call: '5'")
    assert any("expected a call" in line for line in error_lines(run_cli("validate", cwd=workspace)))
    edit(catalog, "call: '5'", "call: diopiAdd(ctx, out, self, other, alpha)")
    assert run_cli("validate", cwd=workspace).exit_code == 0
    # What the store records as passed is what validation skips: with the entries of a version
    # holding a misspelled key recorded so, that version passes.
    edit(bad, "  add.out:\n", "  add.out:\n    autocompar: true\n")
    assert "unknown key 'autocompar'" in error_lines(run_cli("validate", cwd=workspace))[0]
    doc = yamlfile.loads(bad.read_bytes(), str(bad))
    store.store("valid-ops", digests.digest("valid-ops", "catalog", str(bad)),
                sorted(schema._entry_digests(doc, "catalog").values()))
    assert run_cli("validate", cwd=workspace).exit_code == 0


def test_the_store_stays_under_its_size_bound(cache, monkeypatch):
    """Storing a new entry that takes the store over DEEPLINK_GEN_CACHE_MB deletes the least recently
    used entries of any kind (reading one counts as using it) down to three quarters of the bound."""
    import hashlib
    import os

    from deeplink_gen import cache as stored_values

    monkeypatch.setenv("DEEPLINK_GEN_CACHE_MB", "1")
    value = "x" * 100_000                                    # 10 of them fill a megabyte
    keys = [hashlib.sha256(str(i).encode()).hexdigest() for i in range(14)]
    for age, key in enumerate(keys[:9]):
        kind = "demo" if age % 2 else "other"
        stored_values.store(kind, key, value)
        (path,) = [p for p in stored(cache, kind) if p.name == key[2:]]
        os.utime(path, ns=(age * 10**9, age * 10**9))                                    # the first is the oldest
    assert stored_values.load("other", keys[0]) == value                               # ... until it is used
    for key in keys[9:]:
        stored_values.store("demo", key, value)
    kept = [p for p in cache.rglob("*") if p.is_file()]
    assert 0 < sum(p.stat().st_size for p in kept) <= 1024 * 1024
    assert stored_values.load("other", keys[0]) == value and stored_values.load("demo", keys[-1]) == value
    assert stored_values.load("demo", keys[1]) is None and stored_values.load("other", keys[2]) is None


def test_an_entry_is_data_checked_before_use(cache):
    """A changed byte is a miss (and the entry is deleted); so is an entry whose checksum was made to
    match but that names a type outside deeplink-gen's own (what pickle would have run)."""
    import hashlib

    from deeplink_gen import cache as stored_values

    key = hashlib.sha256(b"k").hexdigest()
    stored_values.store("render", key, {"camb": {"a.cpp": "diopiAdd(ctx)"}})
    (path,) = stored(cache, "render")
    raw = path.read_bytes()
    path.write_bytes(raw.replace(b"diopiAdd(", b"diopiAdX("))
    assert stored_values.load("render", key) is None and not path.exists()
    for body in (b'{"c":"os:system","f":["touch PWNED"]}', b'{"c":"subprocess:Popen","f":[["id"]]}',
                 b'{"e":"deeplink_gen.cache:os","v":1}', b'{"c":"deeplink_gen.codec:json","f":[]}',
                 b'{"c":"deeplink_gen.errors:Diagnostic","f":[1]}', b'{"d":[[[1],2]]}'):
        path.parent.mkdir(parents=True, exist_ok=True)
        _forge(path, body)
        assert stored_values.load("render", key) is None, body
        assert not path.exists()


def test_broken_cache_entries_are_misses(workspace, tmp_path, cache):
    """Truncated, garbage and empty entries (stored results, stamps) are
    rebuilt, in a fresh process, without a traceback."""
    env = {"DEEPLINK_GEN_CACHE_DIR": str(cache)}
    out = tmp_path / "out"
    args = ("-C", str(workspace), "render", "--vendor", "camb", "--out", str(out), "--allow-outside-workspace")
    first = run_subprocess(*args, env=env)
    assert first.returncode == 0, first.stderr
    before = tree(out / "camb")
    entries = [p for p in cache.rglob("*") if p.is_file()]
    assert any("/render/" in str(p) for p in entries)
    for damage in (lambda data: data[: len(data) // 2], lambda data: b"\x80\x04garbage", lambda data: b""):
        for path in entries:
            if path.is_file():
                path.write_bytes(damage(path.read_bytes()))
        shutil.rmtree(out)
        result = run_subprocess(*args, env=env)
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr
        assert tree(out / "camb") == before


def test_deleting_the_cache_is_safe(workspace, tmp_path, cache):
    out = tmp_path / "out"
    before = render(workspace, out)
    shutil.rmtree(cache)
    assert render(workspace, out) == before
    shutil.rmtree(cache)
    shutil.rmtree(out)
    assert render(workspace, out) == before


def test_no_cache_reads_and_writes_nothing(workspace, tmp_path, monkeypatch, cache):
    monkeypatch.setenv("DEEPLINK_GEN_NO_CACHE", "1")
    out = tmp_path / "out"
    first = run_cli("render", "--vendor", "camb", "--out", str(out), "--allow-outside-workspace", cwd=workspace)
    assert first.exit_code == 0, first.output
    again = run_cli("render", "--vendor", "camb", "--out", str(out), "--allow-outside-workspace", cwd=workspace)
    assert again.exit_code == 0 and again.output.startswith("0 written"), again.output
    kept = [p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file()]
    assert kept == []


def test_summary_is_the_same_from_the_cache(workspace, tmp_path, cache):
    out = tmp_path / "out"
    args = ("render", "--vendor", "camb", "--out", str(out), "--allow-outside-workspace")
    first = run_cli(*args, cwd=workspace)
    shutil.rmtree(out)
    second = run_cli(*args, cwd=workspace)
    assert (first.exit_code, first.output) == (second.exit_code, second.output)


def test_an_edit_in_a_linked_hand_written_folder_is_seen(workspace, tmp_path, cache):
    """vendors/droplet/ linked from elsewhere: the loader reads through the link, and so does the digest
    that decides whether anything changed."""
    real = tmp_path / "droplet-sources"
    real.mkdir()
    (real / "shim.cpp").write_text("int droplet_shim() { return 1; }\n")
    (workspace / "vendors" / "droplet").symlink_to(real)
    out = tmp_path / "out"
    args = ("render", "--vendor", "droplet", "--out", str(out), "--allow-outside-workspace")
    assert run_cli(*args, cwd=workspace).exit_code == 0
    (real / "shim.cpp").write_text("int droplet_shim() { return 2; }\n")
    check = run_cli(*args, "--check", cwd=workspace)
    assert check.exit_code == 1 and "stale:" in check.stderr and "shim.cpp" in check.stderr
    again = run_cli(*args, cwd=workspace)
    assert again.exit_code == 0 and again.output.startswith("2 written"), again.output   # the source and manifest.json
    assert b"return 2;" in [v for k, v in tree(out / "droplet").items() if k.endswith("shim.cpp")][0]


@pytest.mark.parametrize("where", ["header", "body", "last"])
def test_a_flipped_bit_in_any_entry_kind_is_a_miss(workspace, tmp_path, monkeypatch, cache, where):
    """One bit flipped in every entry of one kind at a time (the stamps, the stored render and
    warnings, the validated workspace, each op's code, schema results): the next render is what an
    uncached render gives, and the damaged entries are gone or whole again."""
    expected = uncached(workspace, tmp_path, monkeypatch)
    out = tmp_path / "out"
    assert render(workspace, out) == expected
    kinds = sorted({p.relative_to(cache).parts[1] for p in cache.rglob("*") if p.is_file()})
    assert {"model", "op-code", "render", "stamps", "valid", "warnings"} <= set(kinds), kinds
    for kind in kinds:
        for path in stored(cache, kind):
            data = bytearray(path.read_bytes())
            at = {"header": 3, "body": data.index(b"\n") + 1 + (len(data) - data.index(b"\n")) // 2,
                  "last": len(data) - 1}[where]
            data[at] ^= 0x10
            path.write_bytes(bytes(data))
        result = run_cli("render", "--vendor", "camb", "--out", str(out), "--allow-outside-workspace",
                         cwd=workspace)
        assert result.exit_code == 0 and "Traceback" not in result.output, (kind, result.output)
        assert tree(out / "camb") == expected, kind
        shutil.rmtree(out)
        assert render(workspace, out) == expected, kind         # from whatever the cache holds now


def _forge(path: Path, body: bytes) -> None:
    """Write *body* as the entry at *path*, with the checksum that makes it pass as one."""
    import hashlib

    from deeplink_gen import cache as stored_values

    header = b"deeplink-gen cache %d " % stored_values.FORMAT
    key = path.parent.name + path.name          # store/<kind>/<key[:2]>/<key[2:]>
    path.write_bytes(header + hashlib.sha256(key.encode() + b"\n" + body).hexdigest().encode() + b"\n" + body)


def test_the_store_never_prunes_or_writes_through_a_link(cache, tmp_path, monkeypatch):
    """A link put in the store (as a kind, or as the store itself) leads nowhere: the pruning that
    a full store starts deletes only the store's own entries, and nothing is stored through a
    linked store."""
    import hashlib
    import os

    from deeplink_gen import cache as stored_values

    monkeypatch.setenv("DEEPLINK_GEN_CACHE_MB", "1")
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "sub" / "precious.txt").write_text("keep me")
    (victim / "sub" / "big.img").write_bytes(b"\0" * 2 * 1024 * 1024)     # alone over the bound
    for f in (victim / "sub").iterdir():
        os.utime(f, (0, 0))                                              # the oldest of all
    key = hashlib.sha256(b"k").hexdigest()
    stored_values.store("demo", key, "x")
    store = next(cache.glob("store-*"))
    (store / "linked").symlink_to(victim, target_is_directory=True)
    for i in range(3):
        stored_values.store("demo", hashlib.sha256(str(i).encode()).hexdigest(), "y" * 1000)
    assert sorted(p.name for p in (victim / "sub").iterdir()) == ["big.img", "precious.txt"]

    shutil.rmtree(store)
    store.symlink_to(victim, target_is_directory=True)
    stored_values.store("demo", key, "x")
    assert stored_values.load("demo", key) is None
    assert sorted(p.name for p in victim.rglob("*")) == ["big.img", "precious.txt", "sub"]


def test_an_entry_names_only_value_types_and_imports_nothing_else(cache):
    """A class is looked up only in the value modules: an entry naming the CLI's entry point
    (whose import would run the CLI again) or a name a value module merely imports is a miss,
    and the module is never imported."""
    import hashlib

    from deeplink_gen import cache as stored_values

    key = hashlib.sha256(b"k").hexdigest()
    stored_values.store("render", key, {"camb": {}})
    (path,) = stored(cache, "render")
    for body in (b'{"c":"deeplink_gen.__main__:main","f":[]}', b'{"c":"deeplink_gen.cli:main","f":[]}',
                 b'{"c":"deeplink_gen.model:Path","f":["/"]}', b'{"e":"deeplink_gen.model.catalog:TorchVersion","v":1}'):
        path.parent.mkdir(parents=True, exist_ok=True)
        _forge(path, body)
        assert stored_values.load("render", key) is None, body
    assert "deeplink_gen.__main__" not in sys.modules


def test_an_entry_of_the_wrong_shape_is_a_miss(workspace, tmp_path, cache):
    """An entry whose checksum was made to match but whose fields do not hold what their types
    say (a call's arguments replaced by a number; a rendered file named outside its vendor's
    folder) is a miss: the command does its work anew and writes only where it would have."""
    env = {"DEEPLINK_GEN_CACHE_DIR": str(cache)}
    out = tmp_path / "out"
    outside = tmp_path / "outside"
    args = ("-C", str(workspace), "render", "--vendor", "camb", "--out", str(out), "--allow-outside-workspace")
    assert run_subprocess(*args, env=env).returncode == 0
    before = tree(out / "camb")
    call_args = b'{"t":[{"c":"deeplink_gen.model.catalog:CallArg","f":["ctx"]},'
    files = b'["camb",{"d":['          # the vendor's files in the render entry: {"camb": {path: text}}
    strays = b'["%s/abs.txt","x"],["../../../../outside/rel.txt","x"],' % str(outside).encode()
    for kind, forge in (("model", lambda body: body.replace(call_args, b'7,{"t":[', 1)),
                        ("render", lambda body: body.replace(files, files + strays, 1))):
        (entry,) = stored(cache, kind)
        body = entry.read_bytes().partition(b"\n")[2]
        assert forge(body) != body, kind
        _forge(entry, forge(body))
        for p in stored(cache, "stamps") + (stored(cache, "render") if kind == "model" else []):
            p.unlink()       # else a render reuses its stored files, and never reads the workspace
        shutil.rmtree(out)
        result = run_subprocess(*args, env=env)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
        assert tree(out / "camb") == before and not outside.exists()


def test_every_value_type_states_what_each_field_holds():
    """Each dataclass an entry may hold has annotations that resolve (to check a decoded
    field against): one that did not would make every entry holding it a miss."""
    import dataclasses
    import importlib
    import pkgutil

    from deeplink_gen import codec, model

    names = ["deeplink_gen.errors", "deeplink_gen.pipeline", "deeplink_gen.model",
             *(f"deeplink_gen.model.{m.name}" for m in pkgutil.iter_modules(model.__path__))]
    classes = {cls for name in names for cls in vars(importlib.import_module(name)).values()
               if dataclasses.is_dataclass(cls) and isinstance(cls, type) and cls.__module__ == name}
    assert len(classes) > 40
    for cls in classes:
        assert codec._field_checks(cls), cls


def test_an_entry_under_another_key_is_a_miss(workspace, tmp_path, cache):
    """An entry copied over the entry of another key (here the workspace validated for all
    vendors over the one validated for a single vendor) is a miss: its header covers its key."""
    assert run_cli("validate", cwd=workspace).exit_code == 0
    (everything,) = stored(cache, "model")
    assert run_cli("validate", "--vendor", "droplet", cwd=workspace).exit_code == 0
    (one,) = [p for p in stored(cache, "model") if p != everything]
    one.write_bytes(everything.read_bytes())
    out = tmp_path / "out"
    result = run_cli("render", "--vendor", "droplet", "--out", str(out), "--allow-outside-workspace", cwd=workspace)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["droplet"], result.output


def test_stamps_of_the_wrong_shape_are_a_miss(workspace, tmp_path, cache):
    """A stamp whose file list is not a mapping (an entry someone rewrote, checksum and all)
    is a miss: the render does its work instead of failing."""
    import json

    out = tmp_path / "out"
    assert render(workspace, out) and (stamp := stored(cache, "stamps"))
    (path,) = stamp
    body = json.loads(path.read_bytes().partition(b"\n")[2])
    for _, entry in body["d"]:
        for pair in entry["d"]:
            if pair[0] == "files":
                pair[1] = [k for k, _ in pair[1]["d"]]
    _forge(path, json.dumps(body, separators=(",", ":")).encode())
    assert render(workspace, out)                   # the files as the stamp lists them: it is read


@pytest.mark.parametrize("place", ["generated/camb/cache", "generated", "vendors/camb", "catalog"])
def test_a_cache_folder_among_the_inputs_or_the_output_is_refused(tmp_path: Path, place: str):
    """A cache inside generated/ would be swept or reported by the render it serves, one
    inside vendors/ or catalog/ would become an input, new at every run: each is refused
    before anything is read or written, naming the setting."""
    ws = tmp_path / "ws"
    shutil.copytree(REPO / "vendors", ws / "vendors")
    (ws / "catalog").mkdir()
    shutil.copy(REPO / "deeplink-gen.yaml", ws)
    before = sorted(p.relative_to(ws) for p in ws.rglob("*"))
    env = {"DEEPLINK_GEN_CACHE_DIR": str(ws / place)}
    for args in (["render", "--all"], ["validate"]):
        result = run_subprocess(*args, cwd=ws, env=env)
        assert result.returncode == 2, result.stderr
        assert f"the cache folder {place} (DEEPLINK_GEN_CACHE_DIR" in result.stderr
    assert sorted(p.relative_to(ws) for p in ws.rglob("*")) == before
    assert run_subprocess("validate", cwd=ws, env={**env, "DEEPLINK_GEN_NO_CACHE": "1"}).returncode == 0


def test_a_workspace_inside_the_cache_folder_is_refused(tmp_path: Path):
    """A workspace named like the cache's store (the cache folder its parent): the cache's
    pruning deleted its hand-written sources and catalog files. Refused, and nothing changes."""
    ws = tmp_path / "store-8"
    shutil.copytree(REPO / "vendors", ws / "vendors")
    shutil.copy(REPO / "deeplink-gen.yaml", ws)
    (ws / "vendors" / "hostsim").mkdir()
    (ws / "vendors" / "hostsim" / "helper.cpp").write_text("// mine\n")
    before = sorted(p.relative_to(ws) for p in ws.rglob("*"))
    result = run_subprocess("render", "--vendor", "hostsim", cwd=ws,
                            env={"DEEPLINK_GEN_CACHE_DIR": str(tmp_path), "DEEPLINK_GEN_CACHE_MB": "0"})
    assert result.returncode == 2, result.stderr
    assert "the workspace . is inside the cache folder" in result.stderr
    assert sorted(p.relative_to(ws) for p in ws.rglob("*")) == before
