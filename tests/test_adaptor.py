"""The DIOPI adaptor and convert_config.yaml rendered from the vendors'
dtypes/layouts sections: golden files, compilation, round-trip, validation."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import yaml

from helpers import BUNDLED_VENDORS, REPO, diopi_include, drop_section, edit, replace_section, run_cli



def _converts(vendor: str) -> bool:
    data = yaml.safe_load((REPO / "vendors" / f"{vendor}.yaml").read_text())
    return bool(data.get("layouts") or set(data.get("dtypes", {})) - {"supported"})


# The bundled vendors with dtypes or layouts to convert: no adaptor for cuda (its DIOPI
# implementation is torch's own).
VENDORS = tuple(v for v in BUNDLED_VENDORS if _converts(v))


def impl(vendor: str) -> str:
    return f"dipu/third_party/DIOPI/impl/{vendor}"


@pytest.mark.parametrize("vendor", VENDORS)
def test_golden_adaptor_and_convert_config(rendered, vendor):
    for rel in ("adaptor/diopi_adaptor.cpp", "adaptor/adaptor_runtime.hpp", "adaptor/impl_functions.hpp",
                "convert_config.yaml"):
        path = f"{impl(vendor)}/{rel}"
        got = (rendered / vendor / path).read_text()
        assert got == (REPO / "generated" / vendor / path).read_text(), f"{vendor}/{path} is stale"
        assert "@generated" in got.splitlines()[0] and "DO NOT EDIT" in got.splitlines()[0]


@pytest.mark.parametrize("vendor", VENDORS)
def test_adaptor_compiles_without_torch(rendered, vendor):
    source = rendered / vendor / impl(vendor) / "adaptor" / "diopi_adaptor.cpp"
    proc = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                           f"-I{diopi_include()}", str(source)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


def _wrapper(text: str, name: str) -> str:
    m = re.search(rf'extern "C" diopiError_t {name}\(.*?\n}}\n', text, re.S)
    assert m, name
    return m.group(0)


def test_adaptor_wrappers(rendered):
    camb = (rendered / "camb" / impl("camb") / "adaptor" / "diopi_adaptor.cpp").read_text()
    conv = _wrapper(camb, "diopiConvolution2d")
    assert "diopiMemoryFormat_t::ChannelsLast}" in conv
    assert "cast_int64_to_int32_float64_to_float32_complex128_to_complex64" in conv
    # results are copied back only after a successful call, and every status is checked
    call = conv.index("::impl::camb::diopiConvolution2d(ctx, outConv.get(), inputConv, weightConv, biasConv")
    assert conv.index("outConv.finish()") > call
    assert "DEEPLINK_ADAPTOR_CHECK(outConv.finish());" in conv
    # in-place arguments are copied in first; plain outputs are not
    assert "Output inputConv(ctx, input, " in _wrapper(camb, "diopiAddInp")
    assert "/*copyIn=*/true" in _wrapper(camb, "diopiAddInp")
    assert "/*copyIn=*/false" in _wrapper(camb, "diopiAdd")
    # adaptor primitives and functions that fill in handles pass straight through
    assert "return ::impl::camb::diopiCastDtype(ctx, out, input);" in camb
    droplet = (rendered / "droplet" / impl("droplet") / "adaptor" / "diopi_adaptor.cpp").read_text()
    addmm = _wrapper(droplet, "diopiAddmm")      # per-tensor layouts
    assert re.search(r"convertInput\(ctx, mat1, \w+, deeplink_adaptor::Formats\{diopiMemoryFormat_t::Contiguous\}", addmm)
    assert re.search(r"convertInput\(ctx, input, \w+, deeplink_adaptor::Formats\{diopiMemoryFormat_t::Preserve\}", addmm)
    ascend = (rendered / "ascend" / impl("ascend") / "adaptor" / "diopi_adaptor.cpp").read_text()
    norm = _wrapper(ascend, "diopiLayerNorm")      # per-tensor dtype rule
    assert "Output save_invstdConv(ctx, save_invstd, cast_float16_to_float32_float64_to_float32," in norm
    assert "Output outConv(ctx, out, cast_float64_to_float32," in norm
    add = _wrapper(ascend, "diopiAdd")             # no rule, NCHW default layout only
    assert "nullptr, deeplink_adaptor::Formats{diopiMemoryFormat_t::Contiguous}" in add


# ---- round trip: convert_config.yaml, read with DIOPI's precedence (levels replace), gives the
# rules the vendor file states (levels merge per source dtype).

def _parse_rules(text: str) -> dict[str, str]:
    out = {}
    for m in re.finditer(r"\(([^)]*)\)\s*->\s*(\w+)", text):
        for src in m.group(1).split(","):
            out[src.strip()] = m.group(2)
    return out


def _diopi_view(config: list) -> tuple[dict, dict]:
    assert isinstance(config, list) and all(len(item) == 1 for item in config)
    items = {k: v for item in config for k, v in item.items()}
    assert len(items) == len(config), "duplicate entries"
    return items.pop("common_config", {}), items


def _stated(vendor: str, function: str, tensor: str | None) -> dict[str, str]:
    data = yaml.safe_load((REPO / "vendors" / f"{vendor}.yaml").read_text())
    d = data.get("dtypes", {})
    merged = dict(d.get("convert", {}))
    f = d.get("functions", {}).get(function, {})
    merged.update(f.get("convert", {}))
    if tensor is not None:
        merged.update(f.get("tensors", {}).get(tensor, {}))
    return {s: t for s, t in merged.items() if "bfloat16" not in (s, t) and "tfloat32" not in (s, t)}


@pytest.mark.parametrize("vendor", VENDORS)
def test_convert_config_round_trip(rendered, vendor):
    config = yaml.safe_load((rendered / vendor / impl(vendor) / "convert_config.yaml").read_text())
    common, ops = _diopi_view(config)
    data = yaml.safe_load((REPO / "vendors" / f"{vendor}.yaml").read_text())
    named = set(data.get("dtypes", {}).get("functions", {})) | set(data.get("layouts", {}).get("functions", {}))
    assert set(ops) == named
    assert _parse_rules(common.get("dtype", "")) == _stated(vendor, "(none)", None)
    assert common.get("layout") == data["layouts"].get("default")
    for fn, body in ops.items():
        body = body or {}
        level = _parse_rules(body["dtype"]) if "dtype" in body else _parse_rules(common.get("dtype", ""))
        assert level == _stated(vendor, fn, None), fn
        for tensor, text in (body.get("tensor_dtype") or {}).items():
            assert _parse_rules(text) == _stated(vendor, fn, tensor), (fn, tensor)
        stated_layout = data.get("layouts", {}).get("functions", {}).get(fn)
        prefer = stated_layout if isinstance(stated_layout, list) else (stated_layout or {}).get("prefer")
        assert body.get("layout") == (",".join(prefer) if prefer else None), fn
        assert isinstance(body.get("layout", ""), str)   # DIPU asserts a string


def test_omitted_rules_are_listed(rendered):
    text = (rendered / "droplet" / impl("droplet") / "convert_config.yaml").read_text()
    assert "# not expressible here, applied by deeplink-gen's adaptor: bfloat16->float32" in text
    assert "mat2: contiguous" in text
    assert "bfloat16" not in "".join(l for l in text.splitlines() if not l.startswith("#"))


def test_preferred_memory_format():
    """What the memory-format placeholders of an op calling each function become, as DIPU
    reads the rendered convert_config.yaml (a substring test, NCHW first)."""
    from deeplink_gen import pipeline
    from deeplink_gen.model.layouts import memory_format_of

    ws = pipeline.load(REPO)
    camb, ascend, droplet = (ws.vendor(n) for n in ("camb", "ascend", "droplet"))

    def preferred_memory_format(vendor, function):
        found = vendor.layouts.memory_format(function)
        return found[0] if found else None

    assert preferred_memory_format(camb, "diopiConvolution2d") == "channels_last"
    assert preferred_memory_format(camb, "diopiBatchNorm") == "channels_last"
    assert preferred_memory_format(camb, "diopiAdd") == "preserve"
    assert preferred_memory_format(camb, "diopiMm") == "contiguous"          # the NCHW default
    assert preferred_memory_format(ascend, "diopiConvolution2d") == "contiguous"
    assert preferred_memory_format(droplet, "diopiMm") == "preserve"         # default ND
    # DIPU's reading: NCL and NCDHW contain no "NCHW", so they preserve the input's format.
    assert [memory_format_of(t) for t in ("NCL", "NCDHW", "NHWC,NCHW", "NDHWC")] == \
        ["preserve", "preserve", "contiguous", "channels_last"]


# ---- validation errors, each exit 1 with file:line

CASES = [
    ("unknown dtype", "dtypes:\n  supported: [float32, int128]\n", 2,
     r"dtypes\.supported\[1\]: 'int128' is not one of"),
    ("unsupported target", "dtypes:\n  supported: [float32, int32]\n  convert:\n    int64: int16\n", 4,
     r"dtypes\.convert\.int64: converts to int16, which is not in dtypes\.supported"),
    ("cycle", "dtypes:\n  supported: [float32, float64]\n  functions:\n    diopiMm:\n      convert:\n"
              "        float32: float64\n        float64: float32\n", 6, r"form a cycle"),
    ("chain", "dtypes:\n  supported: [float32, int32]\n  convert:\n    int64: int32\n  functions:\n"
              "    diopiMm:\n      convert:\n        int32: float32\n", 8, r"form a chain"),
    ("unknown function", "dtypes:\n  supported: [float32]\n  functions:\n    diopiConv2d:\n"
                         "      convert: {float64: float32}\n", 4,
     r"dtypes\.functions\.diopiConv2d: 'diopiConv2d' is not a DIOPI function in the DIOPI prototypes "
     r"\(deeplink_gen/interfaces/data/diopi_prototypes\.yaml\); did you mean"),
    ("unknown tensor", "dtypes:\n  supported: [float32]\n  functions:\n    diopiMm:\n      tensors:\n"
                       "        mat3: {float64: float32}\n", 6,
     r"'mat3' is not a tensor argument of diopiMm; did you mean 'mat2'"),
    ("unknown layout", "layouts:\n  default: NHCW\n", 2, r"layouts\.default: 'NHCW' is not one of"),
    ("layout rule for unknown function", "layouts:\n  functions:\n    diopiFoo: [NHWC]\n", 3,
     r"'diopiFoo' is not a DIOPI function"),
    ("function that fills in handles", "layouts:\n  functions:\n    diopiNonzero: [ND]\n", 3,
     r"diopiNonzero fills in tensor handles"),
    ("keeping a dtype no lower level converts", "dtypes:\n  supported: [float32]\n  functions:\n    diopiMm:\n"
                                                "      convert: {int64: int64}\n", 5,
     r"dtypes\.functions\.diopiMm\.convert\.int64: keeps int64 as it is, but no lower level converts int64"),
    ("common rule to itself", "dtypes:\n  supported: [float32]\n  convert:\n    int64: int64\n", 4,
     r"converts int64 to itself"),
    ("implemented function unknown", "adaptor:\n  implemented:\n    droplet: [diopiCastDtype, diopiCopyInp, diopiMM]\n",
     3, r"adaptor\.implemented\.droplet: 'diopiMM' is not a DIOPI function in the DIOPI prototypes \(.*\); did you mean"),
    ("implemented twice", "adaptor:\n  implemented:\n    droplet: [diopiCastDtype, diopiCopyInp, diopiMm]\n"
                          "    other: [diopiMm]\n", 4, r"diopiMm is listed twice \(first at .*droplet\.yaml:"),
    ("conversion primitives missing", "adaptor:\n  implemented:\n    droplet: [diopiMm, diopiCopyInp]\n", 2,
     r"adaptor\.implemented: the adaptor converts tensors with diopiCastDtype and diopiCopyInp.*diopiCastDtype is "
     r"not listed"),
]


@pytest.mark.parametrize("name,text,line,message", CASES, ids=[c[0] for c in CASES])
def test_conversion_errors(workspace, name, text, line, message):
    base = replace_section(workspace / "vendors" / "droplet.yaml", text)
    result = run_cli("validate", cwd=workspace)
    assert result.exit_code == 1, result.output
    assert re.search(rf"vendors/droplet\.yaml:{base + line - 1}:\d+: error: .*{message}", result.output), \
        result.output
    assert "Traceback" not in result.output


def test_adaptor_wraps_what_the_library_defines(workspace):
    """With an adaptor section, the adaptor wraps every function it lists (in
    the namespace that lists it), whatever the kernels call, and nothing else."""
    base = replace_section(workspace / "vendors" / "droplet.yaml",
                           "adaptor:\n  implemented:\n    droplet: [diopiCastDtype, diopiCopyInp, diopiAsin]\n"
                           "    droplet_ext: [diopiCdist]\n")
    assert base > 1
    result = run_cli("render", "--vendor", "droplet", cwd=workspace)
    assert result.exit_code == 0, result.output
    adaptor = workspace / "generated" / "droplet" / impl("droplet") / "adaptor"
    text = (adaptor / "diopi_adaptor.cpp").read_text()
    assert re.findall(r'extern "C" diopiError_t (\w+)\(', text) == ["diopiAsin", "diopiCastDtype", "diopiCdist",
                                                                      "diopiCopyInp"]
    assert "::impl::droplet_ext::diopiCdist(" in text and "::impl::droplet::diopiAsin(" in text
    decls = (adaptor / "impl_functions.hpp").read_text()
    assert "namespace droplet_ext {\n\ndiopiError_t diopiCdist(" in decls
    proc = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                           f"-I{diopi_include()}", str(adaptor / "diopi_adaptor.cpp")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


def test_an_adaptor_that_converts_nothing_needs_no_conversion_primitives(workspace):
    """A library whose listed functions all forward unconverted (the vendor's one rule is for a
    function it does not define, as muxi's impl/muxi at DIOPI 02f03c6a) need not define
    diopiCastDtype and diopiCopyInp: the adaptor and its runtime header name neither, and compile."""
    vendor = workspace / "vendors" / "droplet.yaml"
    drop_section(vendor, "layouts")
    replace_section(vendor, "dtypes:\n  supported: [bool, int32, int64, float16, float32, float64]\n  functions:\n"
                            "    diopiRMSNorm: {tensors: {inv_rms: {float16: float32}}}\n"
                            "adaptor:\n  implemented:\n    droplet: [diopiCat]\n")
    result = run_cli("render", "--vendor", "droplet", cwd=workspace)
    assert result.exit_code == 0, result.output
    adaptor = workspace / "generated" / "droplet" / impl("droplet") / "adaptor"
    for name in ("diopi_adaptor.cpp", "adaptor_runtime.hpp", "impl_functions.hpp"):
        text = (adaptor / name).read_text()
        assert not re.search(r"::(diopiCastDtype|diopiCopyInp)\(|diopiError_t (diopiCastDtype|diopiCopyInp)\(", text), name
    assert "return ::impl::droplet::diopiCat(ctx, out, tensors, num_inputs, dim);" in \
        (adaptor / "diopi_adaptor.cpp").read_text()
    proc = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
                           f"-I{diopi_include()}", str(adaptor / "diopi_adaptor.cpp")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


def test_a_rendered_library_is_wrapped_whole(rendered):
    """hostsim's DIOPI library is rendered too (diopi_library), and its layouts rules give it an
    adaptor: the adaptor wraps every function the library implements (not only those its
    kernels call: the library exports each only through its wrapper), in impl::hostsim."""
    implemented = json.loads((rendered / "hostsim" / "manifest.json").read_text())["diopi_library"]["implemented"]
    adaptor = rendered / "hostsim" / impl("hostsim") / "adaptor"
    text = (adaptor / "diopi_adaptor.cpp").read_text()
    assert set(re.findall(r'^extern "C" diopiError_t (\w+)\(', text, re.M)) == set(implemented)
    assert "::impl::hostsim::diopiMul(ctx, out, inputConv, otherConv)" in _wrapper(text, "diopiMul")
    assert "return ::impl::hostsim::diopiAbs(ctx, out, input);" in _wrapper(text, "diopiAbs")
    library = (rendered / "hostsim" / impl("hostsim") / "functions" / "functions.cpp").read_text()
    assert "namespace impl {\nnamespace hostsim {" in library
    assert re.search(r'extern "C" \{\n\nconst char\* diopiGetVendorName\(\)', library)
    assert '"${CMAKE_CURRENT_SOURCE_DIR}/adaptor/diopi_adaptor.cpp"' in \
        (rendered / "hostsim" / impl("hostsim") / "CMakeLists.txt").read_text()


def test_a_rendered_library_without_rules_exports_its_functions_itself(workspace):
    """Without dtypes or layouts rules, hostsim has no adaptor: its library defines each
    function extern "C" and builds no adaptor source."""
    drop_section(workspace / "vendors" / "hostsim.yaml", "layouts")
    result = run_cli("render", "--vendor", "hostsim", cwd=workspace)
    assert result.exit_code == 0, result.output
    folder = workspace / "generated" / "hostsim" / impl("hostsim")
    assert not (folder / "adaptor").exists()
    library = (folder / "functions" / "functions.cpp").read_text()
    assert "namespace impl {" not in library and library.endswith('}  // extern "C"\n')
    assert "diopi_adaptor.cpp" not in (folder / "CMakeLists.txt").read_text()


def test_a_rendered_library_takes_no_adaptor_section(workspace):
    """What a rendered DIOPI library defines is its plan's to say, not a list in the vendor file."""
    base = replace_section(workspace / "vendors" / "hostsim.yaml", "adaptor:\n  implemented:\n    hostsim: [diopiAbs]\n")
    result = run_cli("validate", cwd=workspace)
    assert result.exit_code == 1, result.output
    assert re.search(rf"vendors/hostsim\.yaml:{base + 1}:\d+: error: adaptor\.implemented: the DIOPI library is "
                     r"rendered \(diopi_library: aten_cpu\)", result.output), result.output
    assert "Traceback" not in result.output


def test_the_adaptor_section_wraps_what_the_library_defines_whatever_the_ops_keep(workspace):
    """camb's adaptor section lists what its DIOPI library defines: a camb that
    disables mm and mm.out still wraps diopiMm (DIOPI's library exports it
    only through the adaptor), and every wrapper is a listed function."""
    camb = workspace / "vendors" / "camb.yaml"
    listed = yaml.safe_load(camb.read_text())["adaptor"]["implemented"]["camb"]
    assert "diopiMm" in listed
    edit(camb, "\nops:\n", "\nops:\n  mm: {enabled: false}\n  mm.out: {enabled: false}\n")
    result = run_cli("render", "--vendor", "camb", cwd=workspace)
    assert result.exit_code == 0, result.output
    text = (workspace / "generated" / "camb" / impl("camb") / "adaptor" / "diopi_adaptor.cpp").read_text()
    assert re.findall(r'extern "C" diopiError_t (\w+)\(', text) == sorted(listed)
    assert "::impl::camb::diopiMm(" in text


def test_adaptor_wraps_only_the_functions_of_kept_ops(workspace):
    """Without an adaptor section (camb's removed), a vendor that disables mm
    and mm.out does not need diopiMm in its DIOPI library: neither the adaptor
    nor its declarations name it, though the vendor's layouts section still
    has a rule for it."""
    camb = workspace / "vendors" / "camb.yaml"
    drop_section(camb, "adaptor")
    text = camb.read_text().replace("    diopiAdd: [ND]", "    diopiMm: [ND]\n    diopiAdd: [ND]", 1)
    camb.write_text(text.replace("\nops:\n", "\nops:\n  mm: {enabled: false}\n  mm.out: {enabled: false}\n", 1))
    result = run_cli("render", "--vendor", "camb", cwd=workspace)
    assert result.exit_code == 0, result.output
    adaptor = workspace / "generated" / "camb" / impl("camb") / "adaptor"
    for name in ("diopi_adaptor.cpp", "impl_functions.hpp"):
        assert "diopiMm(" not in (adaptor / name).read_text(), name
    assert "diopiAddmm(" in (adaptor / "diopi_adaptor.cpp").read_text()     # a kept op's function stays
