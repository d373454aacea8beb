"""Validation of the kernel vocabulary: calls name only what exists, hook fields
are the only free-form C++, unknown keys and contradictory settings are
errors that name file:line (both places for conflicts), exit code 1."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from textwrap import dedent, indent


import pytest

from helpers import error_lines, kernels, line_of as line_in, run_cli

from deeplink_gen.translate.args import AUX_SUFFIX, LOCAL_SUFFIX
from deeplink_gen.validate.locals import CPU_SUFFIX, INNER_LOCALS, TEMPLATE_FUNCTIONS, WRAPPER_LOCALS
from deeplink_gen.validate.names import C_KEYWORDS, macro_name_problem

VENDOR = dedent("""\
    vendor:
      name: droplet
      device_type: DROPLET
    """)


def make(tmp_path: Path, catalog: str, vendor: str = VENDOR) -> Path:
    ws = tmp_path / "ws"
    (ws / "catalog").mkdir(parents=True)
    (ws / "vendors").mkdir()
    (ws / "catalog" / "ops.yaml").write_text("ops:\n" + indent(dedent(catalog), "  "), encoding="utf-8")
    (ws / "vendors" / "droplet.yaml").write_text(vendor, encoding="utf-8")
    (ws / "deeplink-gen.yaml").write_text("bundled_catalog: false\n")
    return ws


def errors(ws: Path) -> list[str]:
    return error_lines(run_cli("validate", cwd=ws))


def line_of(ws: Path, needle: str, file: str = "catalog/ops.yaml") -> int:
    return line_in(ws / file, needle)


def test_valid_vocabulary_passes(tmp_path: Path):
    ws = make(tmp_path, """\
      equal:
        call: diopiEqual(ctx, &out, self, other)
        locals: [out]
        code:
          beginning: |
            bool out = false;
    """)
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 0, result.output


def test_unknown_entry_key(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self)
        custom_code_before_return: "x;"
    """)
    (err,) = errors(ws)
    assert f"ops.yaml:{line_of(ws, 'custom_code_before_return')}:" in err
    assert "unknown key 'custom_code_before_return'" in err


def test_unknown_hook(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self)
        code:
          at_the_end: "x;"
    """)
    (err,) = errors(ws)
    assert "unknown key 'at_the_end'" in err


def test_call_may_not_name_undeclared_locals(tmp_path: Path):
    ws = make(tmp_path, """\
      sum.IntList_out:
        call: diopiSum(ctx, out, self, dimSize)
        code:
          beginning: |
            ::diopiSize_t dimSize = toDiopiSize(dim);
    """)
    (err,) = errors(ws)
    assert "'dimSize' is not an argument of sum.IntList_out" in err
    # Listing it under locals: makes it valid.
    text = (ws / "catalog" / "ops.yaml").read_text().replace("    code:", "    locals: [dimSize]\n    code:")
    (ws / "catalog" / "ops.yaml").write_text(text)
    assert run_cli("validate", cwd=ws).exit_code == 0


def test_handle_names_only_for_converted_arguments(tmp_path: Path):
    ws = make(tmp_path, """\
      add.out:
        call: diopiAdd(ctx, out, selfDiopiTensorHandle, otherHandle, alpha)
    """)
    (err,) = errors(ws)
    assert "'otherHandle' is not an argument of add.out" in err


def test_locals_without_code(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, tmp)
        locals: [tmp]
    """)
    (err,) = errors(ws)
    assert "locals/ins/outs/sizes name variables of the custom code, but the entry has no code:" in err


def test_local_shadowing_an_argument(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self)
        ins: [self]
        code:
          beginning: "// nothing\\n"
    """)
    (err,) = errors(ws)
    assert "'self' is an argument of relu_, not a local of the custom code" in err


def test_fresh_return_needs_alloc_or_locals(tmp_path: Path):
    ws = make(tmp_path, """\
      relu:
        call: diopiRelu(ctx, out, self)
        code:
          beginning: |
            auto out = nodispatch::empty_like(self);
    """)
    (err,) = errors(ws)
    assert "relu returns a new tensor 'out'" in err


def test_returns_length(tmp_path: Path):
    ws = make(tmp_path, """\
      relu:
        call: diopiRelu(ctx, y, self)
        returns: [y, z]
        alloc:
          y: nodispatch::empty_like(self)
    """)
    (err,) = errors(ws)
    assert "relu has 1 return(s), not 2" in err


def test_no_device_check_must_name_a_tensor(tmp_path: Path):
    ws = make(tmp_path, """\
      add.out:
        call: diopiAdd(ctx, out, self, other, alpha)
        no_device_check: [alpha]
    """)
    (err,) = errors(ws)
    assert "'alpha' is not a device-checked tensor of add.out" in err


def test_dummy_call_needs_code(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self)
        dummy_call: true
    """)
    (err,) = errors(ws)
    assert f"ops.yaml:{line_of(ws, 'dummy_call')}:" in err
    assert "dummy_call skips DIOPI" in err


def test_dummy_call_conflicts_with_fallback_block(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self)
        dummy_call: true
        fallback_to_cpu: true
        code:
          beginning: "return self;\\n"
    """)
    (err,) = errors(ws)
    assert f"ops.yaml:{line_of(ws, 'fallback_to_cpu')}:" in err
    assert f"dummy_call is set at " in err and f"ops.yaml:{line_of(ws, 'dummy_call')}:" in err.split("dummy_call is set at")[1]


def test_force_fallback_needs_custom_fallback(tmp_path: Path):
    ws = make(tmp_path, """\
      addmm.out:
        call: diopiAddmm(ctx, out, self, mat1, mat2, beta, alpha)
        force_fallback: true
    """)
    (err,) = errors(ws)
    assert "force_fallback needs custom_fallback: true" in err


def test_register_false_conflicts(tmp_path: Path):
    ws = make(tmp_path, """\
      addmm.out:
        call: diopiAddmm(ctx, out, self, mat1, mat2, beta, alpha)
        register: false
        custom_fallback: true
    """)
    (err,) = errors(ws)
    assert "custom_fallback has no effect: the op is not registered (register: false at" in err


def test_vendor_autocompare_on_unregistered_op(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self)
        register: false
    """, VENDOR + "ops:\n  relu_:\n    autocompare: true\n")
    (err,) = errors(ws)
    assert f"droplet.yaml:{line_of(ws, 'autocompare', 'vendors/droplet.yaml')}:" in err
    assert f"register: false at " in err and "ops.yaml:" in err


def test_helper_with_its_own_schema(tmp_path: Path):
    """An unregistered entry with a schema is a helper, also when torch has an op of its name: its
    schema need not be torch's (topsrider's max_pool2d_backward takes input and Tensor? indices),
    and a vendor cannot register it."""
    catalog = """\
      max_pool2d_backward:
        schema: max_pool2d_backward(Tensor grad_output, Tensor input, int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor? indices=None) -> Tensor
        call: diopiMaxPool2dBackward(ctx, out, grad_output, input, kernel_size, stride, padding, dilation, ceil_mode, indices)
        alloc:
          out: nodispatch::empty(input.sizes(), grad_output.options())
        register: false
    """
    ws = make(tmp_path, catalog)
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 0, result.output
    ws = make(tmp_path / "registered", catalog, VENDOR + "ops:\n  max_pool2d_backward:\n    register: true\n")
    (err,) = errors(ws)
    assert f"droplet.yaml:{line_of(ws, 'register: true', 'vendors/droplet.yaml')}:" in err
    assert "is a helper with its own schema" in err and "a helper is never registered" in err


def test_vendor_register_override_and_memory_format_are_validated(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self)
    """, VENDOR + "ops:\n  relu_:\n    memory_format: nhwc\n")
    (err,) = errors(ws)
    assert "'nhwc' is not one of: contiguous, channels_last, preserve" in err


def test_autograd_references_and_kind(tmp_path: Path):
    ws = make(tmp_path, """\
      relu:
        call: diopiRelu(ctx, out, self)
        alloc:
          out: nodispatch::empty_like(self)
        autograd:
          backward: threshold_backward
          return_code: "return {result};\\n"
      relu_:
        call: diopiReluInp(ctx, self)
        autograd:
          backward: relu
          return_code: "return {result};\\n"
    """)
    errs = errors(ws)
    assert any("'threshold_backward' is not in the op catalog" in e for e in errs)
    assert any("autograd wraps functional ops only; relu_ is inplace" in e for e in errs)


def test_autograd_requires_return_code(tmp_path: Path):
    ws = make(tmp_path, """\
      relu:
        call: diopiRelu(ctx, out, self)
        alloc:
          out: nodispatch::empty_like(self)
        autograd:
          backward: relu
    """)
    (err,) = errors(ws)
    assert "missing required key 'return_code'" in err


def test_helper_ops(tmp_path: Path):
    ws = make(tmp_path, """\
      my_helper:
        call: diopiRelu(ctx, out, self)
    """)
    (err,) = errors(ws)
    assert "a DIPU-private helper needs schema: and register: false" in err
    ws = make(tmp_path / "b", """\
      my_helper:
        schema: "my_helper(Tensr self) -> Tensor"
        register: false
        call: diopiRelu(ctx, out, self)
    """)
    (err,) = errors(ws)
    assert re.search(r"ops\.my_helper\.schema: not a valid ATen schema", err)


def test_dummy_call_checks_the_function_but_not_the_arguments(tmp_path: Path):
    ws = make(tmp_path, """\
      relu_:
        call: diopiReluInp(ctx, self, notAnArgument)
        dummy_call: true
        code:
          beginning: "return self;\\n"
    """)
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 0, result.output
    ws = make(tmp_path / "b", """\
      relu_:
        call: diopiReluInpX(ctx, self)
        dummy_call: true
        code:
          beginning: "return self;\\n"
    """)
    (err,) = errors(ws)
    assert "'diopiReluInpX' is not a DIOPI operator" in err


# ---------------------------------------------------------------- vendor replace: (per-vendor definitions)

REPLACE_CATALOG = """\
    abs.out:
      call: diopiAbs(ctx, out, self)
      autocompare: false
    """


def test_replace_is_checked_like_a_catalog_entry(tmp_path: Path):
    ws = make(tmp_path, REPLACE_CATALOG, VENDOR + dedent("""\
        ops:
          abs.out:
            replace:
              call: diopiAbs(ctx, out, selff)
              dummy_call: true
              fallback_to_cpu: true
              colour: red
        """))
    errs = errors(ws)
    vendor = "vendors/droplet.yaml"
    assert any(re.search(rf"{vendor}:{line_of(ws, 'colour', vendor)}:\d+: error: ops\S*abs\.out\S*replace\S*colour: "
                         r"unknown key 'colour'", e) for e in errs), errs
    # Schema errors stop there; fix the key and the semantic checks of a catalog entry apply.
    text = (ws / vendor).read_text().replace("      colour: red\n", "")
    (ws / vendor).write_text(text)
    errs = errors(ws)
    assert any(re.search(rf"{vendor}:{line_of(ws, 'fallback_to_cpu', vendor)}:\d+: error: \S*replace\S*fallback_to_cpu: "
                         r"the CPU-fallback block can never run: dummy_call is set at \S*droplet\.yaml:\d+", e)
               for e in errs), errs
    text = text.replace("      dummy_call: true\n      fallback_to_cpu: true\n", "")
    (ws / vendor).write_text(text)
    errs = errors(ws)
    assert any(re.search(rf"{vendor}:\d+:\d+: error: \S*replace\S*call: 'selff' is not an argument of abs\.out", e)
               for e in errs), errs


def test_replace_conflicts_name_both_places(tmp_path: Path):
    ws = make(tmp_path, REPLACE_CATALOG, VENDOR + dedent("""\
        ops:
          abs.out:
            enabled: true
            autocompare: true
            replace:
              call: diopiAbs(ctx, out, self)
              enabled: false
              autocompare: false
        """))
    vendor = "vendors/droplet.yaml"
    errs = errors(ws)
    enabled_outer = line_of(ws, "enabled: true", vendor)
    assert any(re.search(rf"{vendor}:{line_of(ws, 'enabled: false', vendor)}:\d+: error: \S*replace\S*enabled: "
                         rf"'enabled' is also set beside replace: at \S*droplet\.yaml:{enabled_outer}:", e)
               for e in errs), errs
    assert any(re.search(rf"{vendor}:{line_of(ws, 'autocompare: true', vendor)}:\d+: error: \S*autocompare: conflicts "
                         rf"with the vendor's replacement, which marks abs\.out as not comparable at "
                         rf"\S*droplet\.yaml:{line_of(ws, 'autocompare: false', vendor)}:", e) for e in errs), errs


def test_replace_changes_only_that_vendor(tmp_path: Path):
    ws = make(tmp_path, """\
        abs.out:
          call: diopiAbs(ctx, out, self)
        """, VENDOR + dedent("""\
        ops:
          abs.out:
            replace:
              call: diopiNeg(ctx, out, self)
              autocompare: false
        """))
    (ws / "vendors" / "other.yaml").write_text("vendor:\n  name: other\n  device_type: OTHER\n")
    result = run_cli("render", "--all", "--autocompare", cwd=ws)
    assert result.exit_code == 0, result.output
    mine = kernels(ws / "generated" / "droplet", pasted=False)
    other = kernels(ws / "generated" / "other", pasted=False)
    assert '_REGISTER("abs.out", ::diopiNeg, dipu::native::dipu_abs_out);' in mine
    assert "NO_CUSTOMFALLBACK_NO_AUTOCOMPARE_REGISTER(\"abs.out\"" in mine and "dipu_abs_out_autocompare" not in mine
    assert 'NO_CUSTOMFALLBACK_WITH_AUTOCOMPARE_REGISTER("abs.out", ::diopiAbs, dipu::native::dipu_abs_out);' in other
    manifest = (ws / "generated" / "droplet" / "manifest.json").read_text()
    assert '"definition": "vendor"' in manifest


# ---------------------------------------------------------------- the wrapper's scope, empty expressions


def render_errors(ws: Path) -> list[str]:
    """The errors of `render --all`, which must fail and write nothing."""
    errs = error_lines(run_cli("render", "--all", cwd=ws))
    assert not (ws / "generated").exists()
    return errs


@pytest.mark.parametrize("expr", ["'/* nothing */'", "''", "'   '", '"\\n"', "'/* a */ /* b */'"])
def test_empty_alloc_expression(tmp_path: Path, expr: str):
    ws = make(tmp_path, f"""\
      add.Tensor:
        call: diopiAdd(ctx, out, self, other, alpha)
        alloc:
          out: {expr}
    """)
    (err,) = render_errors(ws)
    assert f"ops.yaml:{line_of(ws, 'out: ')}:" in err
    assert "ops[add.Tensor].alloc.out: the expression is empty (only blanks or comments)" in err


def test_empty_alloc_expression_in_a_replacement(tmp_path: Path):
    ws = make(tmp_path, """\
      add.Tensor:
        call: diopiAdd(ctx, out, self, other, alpha)
        alloc:
          out: nodispatch::empty_like(self)
    """, VENDOR + dedent("""\
        ops:
          add.Tensor:
            replace:
              call: diopiAdd(ctx, out, self, other, alpha)
              alloc:
                out: /* later */
        """))
    vendor = "vendors/droplet.yaml"
    (err,) = render_errors(ws)
    assert f"{vendor}:{line_of(ws, 'out: /*', vendor)}:" in err
    assert "ops[add.Tensor].replace.alloc.out: the expression is empty" in err


def test_comment_only_call_argument(tmp_path: Path):
    ws = make(tmp_path, """\
      abs.out:
        call: diopiAbs(ctx, out, /* self */)
    """)
    (err,) = render_errors(ws)
    assert f"ops.yaml:{line_of(ws, 'call:')}:" in err
    assert "ops[abs.out].call: argument 3 ('/* self */') is empty" in err


@pytest.mark.parametrize("name", sorted(WRAPPER_LOCALS) + ["outDiopiTensorHandle", "tDiopiTensorHandle"])
def test_locals_may_not_name_what_the_wrapper_declares(tmp_path: Path, name: str):
    ws = make(tmp_path, f"""\
      abs.out:
        call: diopiAbs(ctx, out, t)
        ins: [t]
        locals: [{name}]
        code:
          beginning: |
            at::Tensor t = self;
            int {name} = 0;
    """)
    (err,) = render_errors(ws)
    assert f"ops.yaml:{line_of(ws, 'locals:')}:" in err
    assert f"ops[abs.out].locals: '{name}' is declared by the generated wrapper" in err


@pytest.mark.parametrize("hook, code, name, what", [
    ("beginning", "int context = 0;", "context", "its DIOPI context"),
    ("before_return", "auto ret = out.dim();", "ret", "the status of its DIOPI call"),
    ("before_call", "[[maybe_unused]] const at::Tensor& self = out;", "self", "an argument of abs.out"),
    ("beginning", "int n = 1, *ctx = nullptr;", "ctx", "the pointer to its DIOPI context"),
    ("before_call", "::diopiTensorHandle_t outDiopiTensorHandle{};", "outDiopiTensorHandle",
     "the converted form of 'out', which the call passes"),
    ("beginning", "auto [context, x] = std::make_pair(1, 2);", "context", "its DIOPI context"),
    ("beginning", "int __attribute__((unused)) ret = 0;", "ret", "the status of its DIOPI call"),
    ("before_call", "decltype(self) guard = self;", "guard", "its device guard"),
    ("beginning", "alignas(8) int (*ctx)(int) = nullptr;", "ctx", "the pointer to its DIOPI context"),
    ("beginning", "struct { int a; } ret;", "ret", "the status of its DIOPI call"),
    ("beginning", "int checkTensorDevice = 0;", "checkTensorDevice",
     "a function its wrapper calls unqualified after the code"),
    ("before_call", "int diopiAbs = 0;", "diopiAbs", "the DIOPI function its wrapper calls after the code"),
])
def test_custom_code_may_not_declare_what_the_wrapper_declares(tmp_path: Path, hook: str, code: str, name: str,
                                                               what: str):
    """Custom code shares the wrapper's scope: a name the wrapper declares there too, declared
    again by the code (not listed under locals:), would not compile."""
    ws = make(tmp_path, f"""\
      abs.out:
        call: diopiAbs(ctx, out, self)
        code:
          {hook}: |
            (void)out;
            {code}
    """)
    (err,) = render_errors(ws)
    assert f"ops.yaml:{line_of(ws, '(void)out;')}:" in err
    assert (f"ops[abs.out].code.{hook}: the code declares '{name}' at line 2 column {code.index(name) + 1}, which "
            f"the generated code declares in the same scope ({what}), so it would not compile: rename the code's "
            f"'{name}'") in err


def test_replacement_code_may_not_declare_what_the_wrapper_declares(tmp_path: Path):
    ws = make(tmp_path, REPLACE_CATALOG, VENDOR + dedent("""\
        ops:
          abs.out:
            replace:
              call: diopiAbs(ctx, out, self)
              code:
                before_call: |
                  auto ret = ::diopiSuccess;
        """))
    (err,) = render_errors(ws)
    vendor = "vendors/droplet.yaml"
    assert re.search(rf"{vendor}:{line_of(ws, 'auto ret', vendor)}:\d+: error: \S*replace\S*code\.before_call: "
                     r"the code declares 'ret' at line 1 column 6, which the generated code declares", err), err


@pytest.mark.parametrize("added, name, column, what", [
    ("auto result = grad_output;", "result", 6, "the result of its autograd function"),
    ("int dipu_convolution_transpose_backward = 0;", "dipu_convolution_transpose_backward", 5,
     "the wrapper its autograd backward calls after the code"),
])
def test_autograd_code_may_not_declare_what_its_function_declares_or_calls(tmp_path: Path, added: str, name: str,
                                                                           column: int, what: str):
    ws = tmp_path / "ws"
    shutil.copytree(FEATURES, ws)
    ops = ws / "catalog" / "ops.yaml"
    text = ops.read_text(encoding="utf-8")
    assert "        auto grad_output = grad_outputs.at(0);\n" in text
    ops.write_text(text.replace("        auto grad_output = grad_outputs.at(0);\n",
                                f"        auto grad_output = grad_outputs.at(0);\n        {added}\n"))
    (err,) = render_errors(ws)
    assert re.search(rf"ops\.yaml:\d+:\d+: error: \S*autograd\.grad_code: the code declares '{name}' at line 2 "
                     rf"column {column}, which the generated code declares in the same scope \({re.escape(what)}\)",
                     err), err


def test_custom_code_may_use_and_shadow_what_the_wrapper_declares(tmp_path: Path):
    """Only a declaration at the code's own level collides: using a name, or declaring it again in
    a nested block, a loop or a lambda's parameters, is C++'s to allow."""
    ws = make(tmp_path, """\
      abs.out:
        call: diopiAbs(ctx, out, self)
        code:
          before_call: |
            TORCH_CHECK(ctx != nullptr, "no context");
            if (out.defined()) { int ret = 0; (void)ret; }
            for (int context = 0; context < 1; ++context) {}
            auto twice = [](int self) { return 2 * self; };
            (void)twice(context.arrays.size());
            std::swap(outDiopiTensorHandle, outDiopiTensorHandle);
          before_return: |
            ret = ::diopiSuccess;
            return out;
    """)
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 0, result.output


def test_custom_code_may_not_declare_a_converted_form_the_call_names_in_an_expression(tmp_path: Path):
    ws = make(tmp_path, """\
      add.out:
        call: diopiAdd(ctx, out, self, other, &alphaDiopiScalar)
        code:
          beginning: |
            ::diopiScalar_t alphaDiopiScalar = dipu::diopi_helper::toDiopiScalar(alpha);
    """)
    (err,) = render_errors(ws)
    assert f"ops.yaml:{line_of(ws, '::diopiScalar_t')}:" in err
    assert ("ops[add.out].code.beginning: the code declares 'alphaDiopiScalar' at line 1 column 17, which the "
            "generated code declares in the same scope (the converted form of 'alpha', which the call passes)") in err


def test_code_may_declare_guard_where_the_entry_has_no_device_guard(tmp_path: Path):
    ws = make(tmp_path, """\
      add.out:
        call: diopiAdd(ctx, out, self, other, alpha)
        device_guard: false
        code:
          beginning: |
            int guard = 0;
            (void)guard;
          before_return: |
            int checkTensorDevice = 0;
            (void)checkTensorDevice;
    """)
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 0, result.output


def test_a_converted_form_the_call_does_not_pass_may_be_a_local(tmp_path: Path):
    # DIPU's norm.out declares dimDiopiSize itself and passes it: the wrapper then declares none.
    ws = make(tmp_path, """\
      norm.out:
        call: diopiNorm(ctx, out, self, p, dimDiopiSize)
        locals: [dimDiopiSize]
        code:
          beginning: |
            ::diopiSize_t dimDiopiSize = toDiopiSize(dim);
    """)
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 0, result.output


def test_wrapper_locals_are_what_the_template_declares(tmp_path: Path):
    """WRAPPER_LOCALS lists every name a rendered wrapper declares in its function scope
    besides converted forms (<name>DiopiTensorHandle, ...): a new one in the template fails here."""
    ws = tmp_path / "ws"
    (ws / "vendors").mkdir(parents=True)
    (ws / "vendors" / "droplet.yaml").write_text(VENDOR)    # the bundled catalog, every switch at its default
    result = run_cli("render", "--all", cwd=ws)
    assert result.exit_code == 0, result.output
    text = kernels(ws / "generated" / "droplet", pasted=False)    # custom code is not pasted in
    bodies = re.findall(r"^\S[^\n]* dipu_\w+(?<!_autocompare)(?<!_wrapper)\([^\n]*\) \{\n(.*?)^\}$", text, re.S | re.M)
    assert len(bodies) > 200
    declaration = re.compile(r"^  (?:\[\[maybe_unused\]\] )?(?:const )?(?!return\b)[\w:<>]+[ &*]+(\w+) *[=({;]", re.M)
    declared = {name for body in bodies for name in declaration.findall(body)}
    suffixes = tuple(set(LOCAL_SUFFIX.values()) | set(AUX_SUFFIX.values()))
    own = {name for name in declared if not name.endswith(suffixes)}
    assert own == set(WRAPPER_LOCALS)


def test_ins_listed_twice(tmp_path: Path):
    ws = make(tmp_path, """\
      abs.out:
        call: diopiAbs(ctx, out, t)
        ins: [t, t?]
        code:
          beginning: |
            at::Tensor t = self;
    """)
    (err,) = render_errors(ws)
    assert f"ops.yaml:{line_of(ws, 'ins:')}:" in err
    assert "ops[abs.out].ins: 't' is listed twice (ins: t and ins: t?)" in err


@pytest.mark.parametrize("name", ["context", "ctx", "ret", "class", "namespace"])
def test_schema_argument_named_like_a_wrapper_local_or_a_keyword(tmp_path: Path, name: str):
    ws = make(tmp_path, f"""\
      add.out:
        schema: "aten::add.out(Tensor self, Tensor {name}, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"
        call: diopiAdd(ctx, out, self, {name}, alpha)
    """)
    (err,) = render_errors(ws)
    assert f"ops.yaml:{line_of(ws, 'schema:')}:" in err
    assert f"ops[add.out].schema: argument '{name}' of add.out " in err
    assert ("C++ keyword" in err) == (name in ("class", "namespace"))


def test_import_skips_an_entry_whose_argument_is_a_wrapper_local(tmp_path: Path):
    functions = tmp_path / "diopi_functions.yaml"
    functions.write_text('- schema: "aten::add.out(Tensor self, Tensor context, *, Scalar alpha=1, Tensor(a!) out) '
                         '-> Tensor(a!)"\n  interface: diopiAdd(ctx, out, self, context, alpha)\n')
    result = run_cli("import-dipu", "--functions", str(functions), "--vendors", "camb", "--out", str(tmp_path / "ws"))
    assert result.exit_code == 0, result.output
    assert "diopi_functions.yaml:1:1: warning: 'add.out' is not valid for deeplink-gen: argument 'context'" in result.stderr
    assert "add.out" not in (tmp_path / "ws" / "catalog" / "dipu.yaml").read_text()


# ---------------------------------------------------------------- names the fallback, twin and autograd blocks use

FEATURES = Path(__file__).parent / "fixtures" / "kernels" / "features"
EVERY_SWITCH = VENDOR + dedent("""\
    defaults:
      autocompare: true
      fallback_to_cpu: true
      device_guard: true
      print_call_info: true
      print_op_args: true
      profiler: true
      device_check: true
      sync_if_enabled: true
    """)


def rendered_blocks(tmp_path: Path) -> list[str]:
    """The function bodies of the bundled catalog's and the features fixture's wrappers, autocompare
    twins and autograd functions, every switch on, custom code not pasted in."""
    bodies = []
    for name, source in (("bundled", None), ("features", FEATURES)):
        ws = tmp_path / name
        if source is not None:
            shutil.copytree(source, ws)
        (ws / "vendors").mkdir(parents=True, exist_ok=True)
        (ws / "vendors" / "droplet.yaml").write_text(EVERY_SWITCH)
        result = run_cli("render", "--all", cwd=ws)
        assert result.exit_code == 0, result.output
        text = kernels(ws / "generated" / "droplet", pasted=False)
        bodies += re.findall(r"^(?:\S[^\n]* dipu_\w+\([^\n]*\) \{|class \w+ : public torch::autograd[^\n]*)\n(.*?)^\}",
                             text, re.S | re.M)
    return bodies


def test_inner_locals_are_what_the_templates_declare(tmp_path: Path):
    """Every name a CPU-fallback block, autocompare twin or autograd function declares is a
    wrapper local, an INNER_LOCALS name, a host copy (<tensor>_cpu) or a converted form (or, in
    an autograd backward, a saved value's <name>_): a new one in the templates fails here."""
    bodies = rendered_blocks(tmp_path)
    text = "\n".join(bodies)
    assert all(f in text for f in ("diopiForceFallbackToCPU", "allclose_autocompare", "saved_data", "dst"))
    declaration = re.compile(r"^ +(?:\[\[maybe_unused\]\] )?(?:const )?(?!return\b)[\w:<>]+(?:&&|[ &*])+ *(\w+) *[=({;]"
                             r"|\bfor \((?:const )?[\w:<>]+[ &*]+(\w+) *[=:]", re.M)
    declared = {a or b for a, b in declaration.findall(text)}
    suffixes = tuple(set(LOCAL_SUFFIX.values()) | set(AUX_SUFFIX.values())) + (CPU_SUFFIX, "_")
    own = {name for name in declared if name in INNER_LOCALS or not name.endswith(suffixes)} - set(WRAPPER_LOCALS)
    # v: the element of a SymInt-list conversion's loop, whose range is read before v is declared.
    assert own - {"v"} == set(INNER_LOCALS)


def test_template_functions_are_what_the_templates_call(tmp_path: Path):
    """TEMPLATE_FUNCTIONS lists every function a wrapper, its twin or its autograd function calls
    unqualified (besides DIOPI's and the wrappers themselves): a new one in the templates fails here."""
    text = "\n".join(rendered_blocks(tmp_path))
    text = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)     # strings
    called = set()
    for m in re.finditer(r"\b([A-Za-z_]\w*)\(", text):
        before = text[:m.start()].rstrip(" ")
        if before.endswith(("::", ".", "->")):
            continue                                      # qualified, a member
        if re.search(r"[\w>&*]$", before) and not re.search(r"\b(?:return|else)$", before):
            continue                                      # a declaration: Type name(...)
        called.add(m.group(1))
    called = {f for f in called if f not in C_KEYWORDS and macro_name_problem(f) is None
              and not re.match(r"diopi[A-Z]|dipu_|custom_fallback_", f)}
    assert called == TEMPLATE_FUNCTIONS


@pytest.mark.parametrize("schema, name, what", [
    # the host copy the CPU fallback makes of self
    ("bitwise_and.Tensor_out(Tensor self, Tensor self_cpu, *, Tensor(a!) out) -> Tensor(a!)", "self_cpu", "argument"),
    ("bitwise_and.Tensor_out(Tensor self_cpu, Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "self_cpu", "argument"),
    # the functional result of the CPU fallback
    ("bitwise_and.Tensor(Tensor self, Tensor result_cpu) -> Tensor", "result_cpu", "argument"),
    # the twin's device result
    ("bitwise_and.Tensor(Tensor self, Tensor result_device) -> Tensor", "result_device", "argument"),
    # the stream the CPU fallback copies back on
    ("bitwise_and.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) current_stream) -> Tensor(a!)",
     "current_stream", "argument"),
    # the out argument's host copy, named like a return
    ("bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor self_cpu", "self_cpu", "return"),
])
def test_schema_name_declared_by_the_cpu_fallback(tmp_path: Path, schema: str, name: str, what: str):
    """A name the CPU-fallback block or the autocompare twin declares again would be shadowed there
    (bitwise_and(self, self_cpu) computed self & self) or declared twice."""
    op = schema.split("(")[0]
    fresh = "self_cpu" if what == "return" else "out"
    alloc = f"\n        alloc:\n          {fresh}: nodispatch::empty_like(self)" if "->" in schema and "(a!)" not in schema else ""
    second = name if name != "self_cpu" or what == "return" else "self_cpu"
    args = {"bitwise_and.Tensor_out": f"out, self, {'other' if name == 'current_stream' else second}",
            "bitwise_and.Tensor": f"{fresh}, self, {'other' if what == 'return' else name}"}[op]
    if op == "bitwise_and.Tensor_out" and name == "current_stream":
        args = "current_stream, self, other"
    ws = make(tmp_path, f"""\
      {op}:
        schema: "{schema}"
        call: diopiBitwiseAnd(ctx, {args}){alloc}
    """)
    (err,) = render_errors(ws)
    assert f"ops.yaml:{line_of(ws, 'schema:')}:" in err
    assert f"ops[{op}].schema: {what} '{name}' of {op} is also declared or called by the generated code" in err


@pytest.mark.parametrize("name", ["dst", "result", "g", "v", "i", "self_gpu", "cpu"])
def test_names_that_collide_with_no_block_of_the_op_pass(tmp_path: Path, name: str):
    """torch's own ops name arguments dst, result, g, v: refused only where a block of that op declares them."""
    ws = make(tmp_path, f"""\
      bitwise_and.Tensor_out:
        schema: "bitwise_and.Tensor_out(Tensor self, Tensor {name}, *, Tensor(a!) out) -> Tensor(a!)"
        call: diopiBitwiseAnd(ctx, out, self, {name})
    """)
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("name, why", [
    *((f, "a function its wrapper calls unqualified") for f in
      ("printf", "on_dipu_or_ignored", "checkTensorDevice", "dumpArg", "tensor_clone_to_host")),
    ("diopiBitwiseAnd", "the DIOPI function its wrapper calls"),
    *((m, "is a standard C macro name") for m in ("NULL", "EOF", "errno", "__LINE__")),
    *((r, "is a reserved identifier") for r in ("__x", "_Tensor", "a__b")),
])
def test_schema_argument_named_like_a_function_a_macro_or_reserved(tmp_path: Path, name: str, why: str):
    ws = make(tmp_path, f"""\
      bitwise_and.Tensor_out:
        schema: "bitwise_and.Tensor_out(Tensor self, Tensor {name}, *, Tensor(a!) out) -> Tensor(a!)"
        call: diopiBitwiseAnd(ctx, out, self, {name})
    """)
    (err,) = render_errors(ws)
    assert f"ops.yaml:{line_of(ws, 'schema:')}:" in err
    assert f"ops[bitwise_and.Tensor_out].schema: argument '{name}' of bitwise_and.Tensor_out " in err
    assert why in err


@pytest.mark.parametrize("schema, what, name, other", [
    ("my_helper(Tensor self, int self) -> Tensor", "argument", "self", "another argument"),
    ("my_helper(Tensor self, int k) -> (Tensor a, Tensor a)", "return", "a", "another return"),
    ("my_helper(Tensor self, int k) -> Tensor self", "return", "self", "an argument"),
    ("my_helper(Tensor self, int k) -> (Tensor k, Tensor b)", "return", "k", "an argument"),
])
def test_schema_names_declared_twice(tmp_path: Path, schema: str, what: str, name: str, other: str):
    fresh = [n.split()[-1] for n in schema.split("->")[1].strip(" ()").split(",")]
    alloc = "".join(f"\n          {n}: nodispatch::empty_like(self)" for n in dict.fromkeys(fresh))
    ws = make(tmp_path, f"""\
      my_helper:
        schema: "{schema}"
        register: false
        call: diopiAbs(ctx, {fresh[-1]}, self)
        alloc:{alloc}
    """)
    errs = render_errors(ws)
    assert any(f"ops.yaml:{line_of(ws, 'schema:')}:" in e and
               f"ops.my_helper.schema: {what} '{name}' of my_helper is also the name of {other}" in e for e in errs), errs


@pytest.mark.parametrize("name, why", [("this", "is a C++ keyword"), ("'NULL'", "is a standard C macro name"),
                                       ("__x", "is a reserved identifier")])
def test_autograd_saved_value_named_like_a_keyword(tmp_path: Path, name: str, why: str):
    """saved: [this] rendered ctx->saved_data["this"] = this; in a static function."""
    ws = tmp_path / "ws"
    shutil.copytree(FEATURES, ws)
    ops = ws / "catalog" / "ops.yaml"
    text = ops.read_text(encoding="utf-8")
    assert "saved: [stride," in text
    ops.write_text(text.replace("saved: [stride,", f"saved: [{name}, stride,"), encoding="utf-8")
    errs = render_errors(ws)
    name = name.strip("'")
    assert any(re.search(rf"ops\.yaml:\d+:\d+: error: \S*autograd\.saved: saved value '{re.escape(name)}' {re.escape(why)}", e)
               for e in errs), errs
