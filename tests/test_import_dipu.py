"""import-dipu on tests/fixtures/dipu/diopi_functions.yaml (a fixture in DIPU's
upstream format covering every key). The imported workspace validates, and
the kernels rendered for a vendor register the ops DIPU's own rules select
(dipu-kernels.md §16.3 device filter, §16.4 torch_ver filter, §12 macro
choice), computed here independently from the fixture, with the same DIOPI
function, macro family and autograd ops."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from torchgen.model import FunctionSchema

from helpers import DIPU_CHECKOUT, REPO, dipu_checkout, kernels, run_cli, syntax_check_kernels

FIXTURES = REPO / "tests" / "fixtures" / "dipu"
FUNCTIONS = FIXTURES / "diopi_functions.yaml"
CAMB_CONVERT = FIXTURES / "camb_convert_config.yaml"
VENDORS = ("camb", "ascend", "droplet")


# ---------------------------------------------------------------- the upstream rules, restated

def upstream_expectation(vendor: str, torch_code: str, torch_ops: set[str]) -> dict[str, tuple]:
    """op -> (DIOPI function, macro, autograd) that DIPU's generator registers
    for *vendor*. Entries DIPU's generator would crash on, or whose schema is
    not an ATen schema even after the known spelling fixes, or whose op torch
    does not have, cannot be registered by anyone and are left out."""
    entries = yaml.load(FUNCTIONS.read_text(), Loader=yaml.SafeLoader)
    out: dict[str, tuple] = {}
    for e in entries:
        if "schema" not in e:
            continue
        devices, vers = e.get("device"), e.get("torch_ver")
        if devices is not None and not isinstance(devices, list):
            continue
        if vers is not None and not all(isinstance(v, str) for v in vers):
            continue
        if devices is not None and not ((vendor in devices or "all" in devices) and f"-{vendor}" not in devices):
            continue
        if vers is not None and (f"-{torch_code}" in vers or ("all" not in vers and torch_code not in vers)):
            continue
        if "register_operator" in e and not e["register_operator"]:
            continue
        schema = e["schema"].removeprefix("aten::")
        name = schema.split("(")[0]
        fixed = re.sub(r"->\s*(\(\)|void)\s*$", "-> ()", schema).replace("const at::ITensorListRef & ", "Tensor[] ")
        try:
            FunctionSchema.parse(fixed)
        except Exception:
            # Unparseable: meant as torch's schema only if the argument names agree with it.
            written = re.findall(r"(\w+)\s*(?:=[^,)]*)?\s*(?=[,)])", schema.split("->")[0].split("(", 1)[1])
            if name not in torch_ops or written != torch_ops[name]:
                continue
        if name not in torch_ops or name in out:       # duplicates: the first definition counts
            continue
        custom = e.get("custom_fallback") in (True, "True")
        compare = e.get("enable_autocompare", True)
        macro = f"{'WITH' if custom else 'NO'}_CUSTOMFALLBACK_{'WITH' if compare else 'NO'}_AUTOCOMPARE_REGISTER"
        fn = re.match(r"\s*([A-Za-z_]\w*)\s*\(", e["interface"]).group(1)
        out[name] = (fn, macro, e.get("autograd") == True)  # noqa: E712 -- upstream's reading
    return out


def rendered_registrations(text: str) -> tuple[dict[str, tuple], list[str]]:
    def block(key: str) -> list[tuple[str, str, str]]:
        """The registrations of every *key* block (one a kernel file)."""
        bodies = re.findall(rf"DIPU_LIBRARY_IMPL\(aten, {key}, library\) \{{\n(.*?)^}}", text, re.S | re.M)
        # An op reaching several DIOPI functions registers through a local named after them, its call's first.
        return [r for body in bodies
                for r in re.findall(r'^ +(\w+_REGISTER)\("([^"]+)", (?:::)?(\w+?)(?:_and_\w+)?,', body, re.M)]
    xpu = block("DIPU_DEVICE_TYPE_MACRO")
    autograd = [op for _, op, _ in block("DIPU_AUTOGRAD_DEVICE_TYPE_MACRO")]
    assert len({op for _, op, _ in xpu}) == len(xpu), "an op is registered twice"
    return {op: (fn, macro, op in autograd) for macro, op, fn in xpu}, autograd


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("import") / "ws"
    result = run_cli("import-dipu", "--functions", str(FUNCTIONS), "--convert-config", f"camb={CAMB_CONVERT}",
                     "--vendors", ",".join(VENDORS), "--out", str(out))
    assert result.exit_code == 0, result.output
    return out, result


@pytest.fixture(scope="module")
def torch_ops() -> dict[str, list[str]]:
    """op name -> argument names, from torch's native_functions.yaml."""
    from deeplink_gen.interfaces.aten import function_schema, installed_table
    return {name: [a.name for a in function_schema(op).arguments.flat_all] for name, op in installed_table().ops.items()}


def render(ws: Path, vendor: str) -> str:
    result = run_cli("render", "--vendor", vendor, "--autocompare", cwd=ws)
    assert result.exit_code == 0, result.output
    return kernels(ws / "generated" / vendor)


# ---------------------------------------------------------------- tests

def test_imported_workspace_validates(imported):
    ws, _ = imported
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (ws / "vendors").iterdir()) == ["ascend.yaml", "camb.yaml", "droplet.yaml"]


@pytest.mark.parametrize("vendor", VENDORS)
def test_registrations_match_dipus_rules(imported, torch_ops, vendor: str):
    from deeplink_gen.interfaces.aten import installed_torch_version
    v = installed_torch_version()
    expected = upstream_expectation(vendor, f"{v.major}{v.minor:02d}{v.patch:02d}", torch_ops)
    got, _ = rendered_registrations(render(imported[0], vendor))
    assert got == expected


def test_per_vendor_definitions(imported, torch_ops):
    """Ops DIPU defines differently per vendor (complementary device filters):
    the catalog holds one definition, each other vendor replaces it in its own
    file, and every vendor registers the DIOPI function DIPU would give it."""
    ws, _ = imported
    from deeplink_gen.interfaces.aten import installed_torch_version
    v = installed_torch_version()
    code = f"{v.major}{v.minor:02d}{v.patch:02d}"
    catalog = yaml.safe_load((ws / "catalog" / "dipu.yaml").read_text())["ops"]
    files = {name: yaml.safe_load((ws / "vendors" / f"{name}.yaml").read_text()).get("ops", {}) for name in VENDORS}
    assert catalog["nll_loss.out"]["call"].startswith("diopiNLLLossV2(")       # camb + ascend: the majority
    assert files["droplet"]["nll_loss.out"]["replace"]["call"].startswith("diopiNLLLoss(")
    assert "replace" not in files["camb"].get("nll_loss.out", {})
    assert catalog["hardtanh.out"]["call"].startswith("diopiHardtanh(")        # ascend + droplet
    camb = files["camb"]["hardtanh.out"]["replace"]
    assert camb["call"].startswith("diopiClampScalar(") and camb["autocompare"] is False
    assert camb["code"]["beginning"] == "// camb clamps instead (illustration)\n"
    for vendor in VENDORS:
        expected = upstream_expectation(vendor, code, torch_ops)
        got, _ = rendered_registrations(render(ws, vendor))
        for op in ("nll_loss.out", "hardtanh.out"):
            assert got[op] == expected[op], (vendor, op)
    assert rendered_registrations(render(ws, "camb"))[0]["hardtanh.out"][1] == "NO_CUSTOMFALLBACK_NO_AUTOCOMPARE_REGISTER"
    out = run_cli("explain", "hardtanh.out", "--vendor", "camb", cwd=ws).output
    assert re.search(r"definition\s+vendor replace \(\S*vendors/camb\.yaml:\d+:\d+\), instead of the catalog's "
                     r"\(\S*catalog/dipu\.yaml:\d+:\d+\)", out), out
    assert re.search(r"autocompare\s+false from vendor replace", out), out
    out = run_cli("explain", "hardtanh.out", "--vendor", "ascend", cwd=ws).output
    assert re.search(r"definition\s+catalog \(\S*catalog/dipu\.yaml:\d+:\d+\)", out), out


def test_warnings_name_the_upstream_line(imported):
    _, result = imported
    text = FUNCTIONS.read_text().splitlines()

    def line(needle: str) -> int:
        return next(i for i, t in enumerate(text, 1) if needle in t)

    expected = {
        line('torch_ver: ["20000",]'): "does not select torch",
        line("Tensr(a!) result"): "schema does not parse as an ATen schema",
        line('"neg_(Tensr(a!) self)'): "read as 'neg_(Tensor(a!) self) -> Tensor(a!)' (fixed)",
        line("cat.out(const at::ITensorListRef"): "read as 'cat.out(Tensor[] tensors",
        line("_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) ->()"): "-> ()' (fixed)",
        line("diopiMaxPool2dWithIndices(&context"): "'&context'; passed as ctx (fixed)",
        line("device: droplet"): "device: must be a list",
        line("torch_ver: [20100]"): "must be a list of strings",
        line("- interface: diopiExp"): "no schema string",
        line("enable_autocompre"): "unknown key 'enable_autocompre'",
        line("autocompare: disable"): "'autocompare' is ignored by DIPU's generator",
        line("device: [-camb]") - 1: "selects none of camb, ascend, droplet",
        line("device: [cmab]") - 1: "selects none of camb, ascend, droplet",
        line("backward_schema: \"cross_entropy_loss_backward"): "without 'autograd: True'",
        line('- schema: "convolution_transpose_backward(Tensor'): "imported as an unregistered helper",
    }
    relu = [i for i, t in enumerate(text, 1) if t.startswith('- schema: "relu_(')]
    expected[relu[1]] = f"'relu_' is defined again (first at line {relu[0]})"
    stderr = result.stderr
    for n, message in expected.items():
        assert re.search(rf"diopi_functions\.yaml:{n}:1: warning: .*{re.escape(message)}", stderr), (n, message)


def test_vendor_overrides_from_filters_and_layouts(imported):
    ws, _ = imported
    camb = yaml.safe_load((ws / "vendors" / "camb.yaml").read_text())
    ascend = yaml.safe_load((ws / "vendors" / "ascend.yaml").read_text())
    catalog = yaml.safe_load((ws / "catalog" / "dipu.yaml").read_text())["ops"]
    assert catalog["silu.out"]["enabled"] is False and camb["ops"]["silu.out"]["enabled"] is True
    assert ascend["ops"]["linear"]["enabled"] is False and "enabled" not in catalog["linear"]
    # convert_config: diopiBatchNorm NHWC, diopiConvTranspose2d NLC.., common NCHW (§14).
    assert camb["ops"]["native_batch_norm"]["memory_format"] == "channels_last"
    assert camb["ops"]["conv_transpose2d.input"]["memory_format"] == "channels_last"
    assert camb["ops"]["convolution_transpose_backward"]["memory_format"] == "contiguous"
    assert "memory_format" not in str(ascend)        # no convert config given for ascend
    assert catalog["neg.out"]["torch"] == "!=2.0.0"
    assert catalog["max_pool2d_with_indices.out"]["call"].startswith("diopiMaxPool2dWithIndices(ctx, out,")
    assert "const_cast<diopiTensorHandle_t>(running_meanDiopiTensorHandle)" in catalog["native_batch_norm"]["call"]
    assert catalog["native_layer_norm"]["returns"] == ["out", "save_mean", "save_invstd"]
    assert catalog["conv_transpose2d.input"]["autograd"]["backward"] == "convolution_transpose_backward"


def test_custom_code_is_carried_byte_for_byte(imported):
    ws, _ = imported
    upstream = yaml.load(FUNCTIONS.read_text(), Loader=yaml.SafeLoader)
    catalog = yaml.safe_load((ws / "catalog" / "dipu.yaml").read_text())["ops"]
    add = next(e for e in upstream if e.get("schema", "").startswith("aten::add.out"))
    assert catalog["add.out"]["code"]["beginning"] == add["custom_code_at_the_beginning"]
    text = render(ws, "camb")
    assert add["custom_code_at_the_beginning"] in text
    assert "at::MemoryFormat::ChannelsLast3d" in text


def test_older_spellings_are_read_as_meant(imported):
    """An older file's argument names (lerp's 'input' for torch's 'self') are kept through its
    schema, so the wrapper takes them; register_op: False on an op torch does not have is fixed,
    with a warning."""
    ws, result = imported
    catalog = yaml.safe_load((ws / "catalog" / "dipu.yaml").read_text())["ops"]
    assert catalog["lerp.Scalar_out"]["call"] == "diopiLerpScalar(ctx, out, input, end, weight)"
    assert catalog["lerp.Scalar_out"]["schema"].startswith("lerp.Scalar_out(Tensor input, Tensor end, ")
    assert catalog["wrap_diopi_copy_inp"]["register"] is False and "schema" in catalog["wrap_diopi_copy_inp"]
    assert "may not compile" not in result.stderr and "torch's names" not in result.stderr
    assert "'wrap_diopi_copy_inp' is not an op of torch and says register_op: False" in result.stderr
    text = render(ws, "camb")
    assert "dipu_lerp_scalar_out(const at::Tensor & input, const at::Tensor & end, " in text
    assert "::diopiLerpScalar(ctx, outDiopiTensorHandle, inputDiopiTensorHandle, endDiopiTensorHandle, &weightDiopiScalar)" in text
    assert "dipu_wrap_diopi_copy_inp(" in text and '"wrap_diopi_copy_inp"' not in text


def test_import_refuses_to_overwrite(imported, tmp_path: Path):
    ws, _ = imported
    result = run_cli("import-dipu", "--functions", str(FUNCTIONS), "--vendors", "camb", "--out", str(ws))
    assert result.exit_code == 2 and "--force" in result.output


def test_bad_arguments(tmp_path: Path):
    result = run_cli("import-dipu", "--functions", str(FUNCTIONS), "--vendors", "camb",
                     "--convert-config", f"ascend={CAMB_CONVERT}", "--out", str(tmp_path / "o"))
    assert result.exit_code == 2 and "VENDOR=PATH" in result.output
    broken = tmp_path / "broken.yaml"
    broken.write_text("- schema: [unclosed\n")
    result = run_cli("import-dipu", "--functions", str(broken), "--vendors", "camb", "--out", str(tmp_path / "o"))
    assert result.exit_code == 1
    assert re.search(r"broken\.yaml:\d+:\d+: error: .*YAML syntax error", result.stderr)


@pytest.mark.parametrize("args, says", [
    (["--vendors", "camb,camb"], "camb named twice"),
    (["--vendors", "camb", "--runtime", "camb="], "'camb=' names nothing after '='"),
    (["--vendors", "camb", "--convert-config", f"camb={CAMB_CONVERT}", "--convert-config", f"camb={CAMB_CONVERT}"],
     "camb is given twice"),
])
def test_a_vendor_named_twice_or_without_its_path_is_a_usage_error(tmp_path: Path, args: list[str], says: str):
    result = run_cli("import-dipu", "--functions", str(FUNCTIONS), *args, "--out", str(tmp_path / "o"))
    assert result.exit_code == 2 and says in result.output
    assert not (tmp_path / "o").exists()


def test_imported_kernels_compile(imported):
    ws, _ = imported
    render(ws, "camb")
    result = syntax_check_kernels(ws / "generated" / "camb", warnings=["-Wall", "-Wextra", "-Werror"])
    assert result.returncode == 0, result.stderr[-6000:]


def test_unregistered_helper_keeps_its_own_schema(tmp_path: Path):
    """topsrider's max_pool2d_backward is named like an op of torch but is a helper with its own
    schema (input, ..., Tensor? indices): imported unregistered with that schema, without a
    warning, and topsrider's kernels (its custom code, and max_pool2d's autograd calling it)
    compile."""
    ws = tmp_path / "ws"
    result = run_cli("import-dipu", "--functions", str(FUNCTIONS), "--vendors", "topsrider", "--out", str(ws))
    assert result.exit_code == 0, result.output
    assert "max_pool2d_backward" not in result.stderr
    helper = yaml.safe_load((ws / "catalog" / "dipu.yaml").read_text())["ops"]["max_pool2d_backward"]
    assert helper["register"] is False
    assert helper["schema"].startswith("max_pool2d_backward(Tensor grad_output, Tensor input, ")
    assert helper["locals"] == ["out"]        # its return, declared by the custom code; input and indices are arguments
    text = render(ws, "topsrider")
    assert "dipu_max_pool2d_backward(const at::Tensor & grad_output, const at::Tensor & input, " in text
    assert '"max_pool2d_backward"' not in text
    compiled = syntax_check_kernels(ws / "generated" / "topsrider", warnings=["-Wall", "-Wextra", "-Werror"])
    assert compiled.returncode == 0, compiled.stderr[-6000:]


OLDER = FIXTURES / "diopi_functions_older.yaml"


def test_older_spellings_are_read_as_their_generator_read_them(tmp_path: Path):
    """A file spelled as before 2024-10-10 is read as its generator read it: register_op: False
    leaves the op unregistered (a helper with its schema), autocompare: disable takes the op out of
    autocompare; the placeholder as spelled until 2023-12-19 is read as meant, with a warning at its
    line, and a placeholder no generator replaces is a warning at its line, its entry skipped."""
    ws = tmp_path / "ws"
    result = run_cli("import-dipu", "--functions", str(OLDER), "--convert-config", f"camb={CAMB_CONVERT}",
                     "--vendors", "camb", "--out", str(ws))
    assert result.exit_code == 0, result.output
    assert "is ignored by DIPU's generator" not in result.stderr
    catalog = yaml.safe_load((ws / "catalog" / "dipu.yaml").read_text())["ops"]
    for op in ("cross_entropy_loss", "transpose_"):
        assert catalog[op]["register"] is False and catalog[op]["schema"].startswith(f"{op}(Tensor"), op
    assert catalog["bernoulli_.float"]["autocompare"] is False and catalog["uniform_"]["autocompare"] is False
    assert "autocompare" not in catalog["log.out"] and "register" not in catalog["log.out"]
    assert "sigmoid.out" not in catalog
    assert "${PREFERRED_MEMORY_FORMAT_PLACEHOLDER:-input.suggest_memory_format()}" in \
        catalog["convolution_overrideable"]["code"]["beginning"]

    text = OLDER.read_text().splitlines()
    old = next(i for i, t in enumerate(text, 1) if "${PREFERED_" in t)
    unknown = next(i for i, t in enumerate(text, 1) if "PLACEHODLER" in t)
    assert re.search(rf"diopi_functions_older\.yaml:{old}:1: warning: '\$\{{PREFERED_MEMORY_FORMAT_PLACEHOLDER'"
                     r" is the spelling .* \(fixed\)", result.stderr), result.stderr
    assert re.search(rf"diopi_functions_older\.yaml:{unknown}:1: warning: '\$\{{PREFERRED_MEMORY_FORMAT_PLACEHODLER"
                     r".* is not a placeholder DIPU's generator replaces", result.stderr), result.stderr
    assert re.search(rf"diopi_functions_older\.yaml:{unknown - 2}:1: warning: .*entry skipped", result.stderr)

    kernels = render(ws, "camb")
    got, _ = rendered_registrations(kernels)
    assert got == {
        "bernoulli_.float": ("diopiBernoulliScalar", "NO_CUSTOMFALLBACK_NO_AUTOCOMPARE_REGISTER", False),
        "uniform_": ("diopiUniformInp", "NO_CUSTOMFALLBACK_NO_AUTOCOMPARE_REGISTER", False),
        "log.out": ("diopiLog", "NO_CUSTOMFALLBACK_WITH_AUTOCOMPARE_REGISTER", False),
        "convolution_overrideable": ("diopiConvolution2d", "WITH_CUSTOMFALLBACK_WITH_AUTOCOMPARE_REGISTER", False),
    }
    assert "dipu_cross_entropy_loss(const at::Tensor & self, " in kernels and "dipu_transpose_(" in kernels
    assert "at::empty(output_size, input.options(),at::MemoryFormat::Contiguous)" in kernels   # camb's NCHW
    assert "${" not in kernels


@pytest.mark.parametrize("version, gate", [("2.2.2", "==2.2.2"), ("2.1.1", "==2.1.1"), ("2.0.0", None)])
def test_a_torch_ver_list_selects_by_membership(tmp_path: Path, version: str, gate: str | None):
    """torch_ver: ["20100", "20101", "20202"] (not one interval) imports the entry for each torch it
    lists, gated to that torch, and for no other."""
    ws = tmp_path / "ws"
    result = run_cli("import-dipu", "--functions", str(OLDER), "--vendors", "camb", "--torch-version", version,
                     "--out", str(ws))
    assert result.exit_code == 0, result.output
    catalog = yaml.safe_load((ws / "catalog" / "dipu.yaml").read_text())["ops"]
    line = next(i for i, t in enumerate(OLDER.read_text().splitlines(), 1) if '"20100", "20101", "20202"' in t)
    if gate is None:
        assert "std.correction_out" not in catalog
        assert re.search(rf"diopi_functions_older\.yaml:{line}:1: warning: torch_ver .* does not select torch 20000",
                         result.stderr), result.stderr
    else:
        assert catalog["std.correction_out"]["torch"] == gate
        assert f"older.yaml:{line}:" not in result.stderr
        assert run_cli("validate", "--torch-version", version, cwd=ws).exit_code == 0


# ---------------------------------------------------------------- --dipu CHECKOUT

CHECKOUT_FUNCTIONS = DIPU_CHECKOUT / "dipu/scripts/autogen_diopi_wrapper/diopi_functions.yaml"
CHECKOUT_IMPL = DIPU_CHECKOUT / "dipu/third_party/DIOPI/impl"


def workspace_bytes(ws: Path) -> dict[str, bytes]:
    return {p.relative_to(ws).as_posix(): p.read_bytes() for p in sorted(ws.rglob("*")) if p.is_file()}


def test_a_checkout_gives_what_the_options_give(tmp_path: Path):
    """--dipu reads DIPU's op file and each vendor's DIOPI convert_config.yaml and impl folder
    from the checkout: the workspace is byte for byte the one the options pointed at the same
    files write, and the report names each file it read."""
    by_checkout, by_options = tmp_path / "checkout", tmp_path / "options"
    result = run_cli("import-dipu", "--dipu", str(DIPU_CHECKOUT), "--vendors", "camb,droplet",
                     "--out", str(by_checkout))
    assert result.exit_code == 0, result.output
    camb = CHECKOUT_IMPL / "camb"
    assert f"op file: {CHECKOUT_FUNCTIONS}\n" in result.stdout
    assert f"camb: convert config: {camb / 'convert_config.yaml'}\n" in result.stdout
    assert f"camb: impl folder: {camb}\n" in result.stdout
    explicit = run_cli("import-dipu", "--functions", str(CHECKOUT_FUNCTIONS), "--vendors", "camb,droplet",
                       "--convert-config", f"camb={camb / 'convert_config.yaml'}", "--impl", f"camb={camb}",
                       "--out", str(by_options))
    assert explicit.exit_code == 0, explicit.output
    assert workspace_bytes(by_checkout) == workspace_bytes(by_options)
    vendor = yaml.safe_load((by_checkout / "vendors" / "camb.yaml").read_text())
    assert vendor["layouts"]["default"] == "NCHW" and "diopiRelu" in vendor["adaptor"]["implemented"]["camb"]
    assert run_cli("validate", cwd=by_checkout).exit_code == 0


def test_an_option_wins_over_the_checkout(tmp_path: Path):
    """--functions and --convert-config name files read instead of the checkout's."""
    mixed, plain = tmp_path / "mixed", tmp_path / "plain"
    camb = CHECKOUT_IMPL / "camb"
    result = run_cli("import-dipu", "--dipu", str(DIPU_CHECKOUT), "--functions", str(FUNCTIONS),
                     "--convert-config", f"camb={CAMB_CONVERT}", "--vendors", "camb", "--out", str(mixed))
    assert result.exit_code == 0, result.output
    assert f"op file: {FUNCTIONS}\n" in result.stdout
    assert f"camb: convert config: {CAMB_CONVERT} (given with --convert-config)\n" in result.stdout
    explicit = run_cli("import-dipu", "--functions", str(FUNCTIONS), "--convert-config", f"camb={CAMB_CONVERT}",
                       "--impl", f"camb={camb}", "--vendors", "camb", "--out", str(plain))
    assert explicit.exit_code == 0, explicit.output
    assert workspace_bytes(mixed) == workspace_bytes(plain)
    assert yaml.safe_load((mixed / "vendors" / "camb.yaml").read_text())["layouts"]["functions"]["diopiAdd"] == ["ND"]


def test_a_vendor_without_diopi_files_is_reported(tmp_path: Path):
    """A vendor whose DIOPI folder (DIPU's DIOPI_IMPL_OPT, as DIOPI maps it) is missing, or has no
    convert_config.yaml or no sources, gets none, one report line each naming the path looked at;
    muxi's impl folder is the one its CMakeLists.txt has DIOPI's generator wrap (impl/torch)."""
    ws = tmp_path / "ws"
    result = run_cli("import-dipu", "--dipu", str(DIPU_CHECKOUT), "--vendors", "ascend,muxi", "--out", str(ws))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert f"ascend: convert config: none (no {CHECKOUT_IMPL / 'ascend' / 'convert_config.yaml'})" in lines
    assert f"ascend: impl folder: none (no {CHECKOUT_IMPL / 'ascend'})" in lines
    assert f"muxi: convert config: none (no {CHECKOUT_IMPL / 'muxi' / 'convert_config.yaml'})" in lines
    muxi = next(line for line in lines if line.startswith("muxi: impl folder: "))
    assert muxi.startswith(f"muxi: impl folder: none (no functions/ or functions_ext/ in {CHECKOUT_IMPL / 'torch'}; "
                           f"diopi_use_adapter at {CHECKOUT_IMPL / 'muxi' / 'CMakeLists.txt'}:"), muxi
    for v in ("ascend", "muxi"):
        vendor = yaml.safe_load((ws / "vendors" / f"{v}.yaml").read_text())
        assert not {"dtypes", "layouts", "adaptor"} & set(vendor), v


def test_what_is_not_a_checkout(tmp_path: Path):
    """Each way a folder is not a checkout the import can read is exit 1, naming the path and
    what to do, without a traceback; without --dipu, --functions is needed (a usage error)."""
    def run(checkout: Path, *more: str):
        return run_cli("import-dipu", "--dipu", str(checkout), *more, "--vendors", "camb", "--out", str(tmp_path / "o"))

    missing = run(tmp_path / "nowhere")
    assert missing.exit_code == 1 and f"{tmp_path / 'nowhere'}: error: --dipu: not a directory" in missing.stderr
    no_dipu = run(tmp_path)
    assert no_dipu.exit_code == 1 and f"{tmp_path}: error: --dipu: no dipu/ folder here" in no_dipu.stderr
    inner = run(DIPU_CHECKOUT / "dipu")
    assert inner.exit_code == 1 and "this looks like the dipu/ folder itself; give its parent" in inner.stderr

    tree = dipu_checkout(tmp_path / "tree")
    (tree / "dipu/scripts/autogen_diopi_wrapper/diopi_functions.yaml").unlink()
    no_ops = run(tree)
    assert no_ops.exit_code == 1
    assert (f"{tree}/dipu/scripts/autogen_diopi_wrapper/diopi_functions.yaml: error: --dipu: DIPU's op file is not "
            "there") in no_ops.stderr and "--functions PATH" in no_ops.stderr

    bare = dipu_checkout(tmp_path / "bare", diopi=False)
    empty = run(bare)
    assert empty.exit_code == 1
    assert (f"{bare}/dipu/third_party/DIOPI: error: --dipu: the DIOPI submodule is not initialised (the folder is "
            "empty): run `git submodule update --init dipu/third_party/DIOPI`") in empty.stderr
    for result in (missing, no_dipu, inner, no_ops, empty):
        assert "Traceback" not in result.output
    # DIOPI is not read when the options name every vendor's files.
    given = run(bare, "--convert-config", f"camb={CAMB_CONVERT}", "--impl", f"camb={CHECKOUT_IMPL / 'camb'}")
    assert given.exit_code == 0, given.output

    neither = run_cli("import-dipu", "--vendors", "camb", "--out", str(tmp_path / "o2"))
    assert neither.exit_code == 2 and "give --dipu CHECKOUT (a deeplink.framework checkout) or --functions PATH" \
        in neither.output


def test_import_force_replaces_only_what_an_import_wrote(tmp_path: Path):
    """--force rewrites the files an earlier import wrote and removes those it no longer writes;
    a vendor or catalog file someone else wrote stays, and the import says so."""
    import shutil

    ws = tmp_path / "ws"
    assert run_cli("import-dipu", "--functions", str(FUNCTIONS), "--vendors", "camb", "--out", str(ws)).exit_code == 0
    (ws / "catalog" / "mine.yaml").write_text("ops: {}\n")
    shutil.copy(REPO / "vendors" / "droplet.yaml", ws / "vendors" / "droplet.yaml")
    stale = ws / "vendors" / "ascend.yaml"
    stale.write_text("# Imported by deeplink-gen import-dipu from DIPU's diopi_functions.yaml.\nvendor: {}\n")
    result = run_cli("import-dipu", "--functions", str(FUNCTIONS), "--vendors", "camb", "--out", str(ws), "--force")
    assert result.exit_code == 0, result.output
    assert (ws / "catalog" / "mine.yaml").read_text() == "ops: {}\n"
    assert (ws / "vendors" / "droplet.yaml").read_bytes() == (REPO / "vendors" / "droplet.yaml").read_bytes()
    assert not stale.exists()
    assert f"note: kept {ws / 'catalog' / 'mine.yaml'}, {ws / 'vendors' / 'droplet.yaml'}: import-dipu did not write" \
        in result.stderr.replace("\n", " ")


@pytest.mark.parametrize("field", ["ins: 5", "outs: true", "size_attr: 5", "size_attr: [1, [2]]",
                                   "no_device_check_args: true", "saved_data: {a: 1}", "device: [[camb]]"])
def test_a_list_of_names_of_another_shape_skips_the_entry_at_its_line(tmp_path: Path, field: str):
    functions = tmp_path / "f.yaml"
    functions.write_text('- schema: "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> '
                         f'Tensor(a!)"\n  interface: diopiAdd(ctx, out, self, other, alpha)\n  {field}\n')
    result = run_cli("import-dipu", "--functions", str(functions), "--vendors", "camb", "--out", str(tmp_path / "ws"))
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    key = field.split(":")[0]
    assert f"f.yaml:3:1: warning: {key}: must be a list of " in result.stderr and "entry skipped" in result.stderr


def test_a_file_where_a_folder_goes_fails_before_anything_is_written(tmp_path: Path):
    out = tmp_path / "o"
    out.mkdir()
    (out / "catalog").write_text("a file\n")
    result = run_cli("import-dipu", "--functions", str(FUNCTIONS), "--vendors", "camb", "--out", str(out))
    assert result.exit_code == 1
    assert f"{out / 'catalog' / 'dipu.yaml'}: error: --out: {out / 'catalog'} is a file where a folder is needed " \
           "to write this one; nothing was written" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["catalog"]


def test_keys_that_replace_a_merged_mapping_are_no_duplicates(tmp_path: Path):
    """`<<: *base` then the entry's own schema: DIPU's loader keeps the entry's, and so does the import,
    without calling it a duplicate key; a key written twice in the entry itself still is one."""
    ops = tmp_path / "ops.yaml"
    ops.write_text(
        '- &base\n'
        '  schema: "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"\n'
        '  custom_code_at_the_beginning: |\n'
        '    TORCH_CHECK(alpha.toDouble() != 42.0, "no");\n'
        '  interface: diopiAdd(ctx, out, self, other, alpha)\n'
        '- <<: *base\n'
        '  schema: "sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"\n'
        '  interface: diopiSub(ctx, out, self, other, alpha)\n'
        '  interface: diopiSub(ctx, out, self, other, alpha)\n'
        '- &mul\n'
        '  schema: "mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)"\n'
        '  custom_code_at_the_beginning: |\n'
        '    TORCH_CHECK(self.dim() < 8, "no");\n'
        '  interface: diopiMul(ctx, out, self, other)\n'
        '- <<: [*mul, *base]\n'       # two merged mappings: the first listed wins, without a word
        '  schema: "maximum.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)"\n'
        '  interface: diopiMaximum(ctx, out, self, other)\n')
    out = tmp_path / "o"
    result = run_cli("import-dipu", "--functions", str(ops), "--vendors", "camb", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert [line for line in result.stderr.splitlines() if "duplicate key" in line] == [
        f"{ops}:9:1: warning: duplicate key 'interface' (upstream keeps the last value; so do we)"]
    catalog = yaml.safe_load((out / "catalog" / "dipu.yaml").read_text())["ops"]
    assert catalog["sub.out"]["call"] == "diopiSub(ctx, out, self, other, alpha)"
    assert catalog["sub.out"]["code"] == catalog["add.out"]["code"]
    assert catalog["maximum.out"]["code"] == catalog["mul.out"]["code"]


@pytest.mark.parametrize("config, line, warns, convert", [
    ("- common_config:\n    dtype: (int64)->int32\n    dtype: (float64)->float32\n", 3,
     "common_config: duplicate key 'dtype' (first at line 2); as DIOPI's generator does, the last value is kept",
     {"float64": "float32"}),
    ("- common_config:\n    dtype: (int64)->int32, (float64)->float32, (int64)->int16\n", 2,
     "common_config.dtype: (int64) has a rule again; as DIOPI's generator does, the last one is kept, "
     "(int64)->int16", {"int64": "int16", "float64": "float32"}),
    ("- common_config:\n    dtype: (int64)->int32\n- common_config:\n    layout: NHWC\n", 3,
     "common_config is configured again (first at line 1); as in DIOPI's generator, each setting it gives "
     "replaces the earlier one's", {"int64": "int32"}),
])
def test_a_conversion_given_twice_is_read_as_diopi_reads_it(tmp_path: Path, config: str, line: int, warns: str,
                                                           convert: dict):
    """The last of two dtype keys or rules wins, with a warning; a second common_config without a
    dtype keeps the first one's, as DIOPI's generator does."""
    path = tmp_path / "convert_config.yaml"
    path.write_text(config)
    out = tmp_path / "o"
    result = run_cli("import-dipu", "--functions", str(FUNCTIONS), "--vendors", "camb", "--convert-config",
                     f"camb={path}", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert f"{path}:{line}:1: warning: {warns}" in result.stderr, result.stderr
    assert yaml.safe_load((out / "vendors" / "camb.yaml").read_text())["dtypes"]["convert"] == convert
