"""Bad runtime sections exit 1 with file:line:col, key path and a message."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import run_cli


def _edit(ws: Path, vendor: str, old: str, new: str) -> Path:
    path = ws / "vendors" / f"{vendor}.yaml"
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))
    return path


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def _errors(ws: Path) -> str:
    result = run_cli("validate", cwd=ws)
    assert result.exit_code == 1, result.output
    return result.stderr


def test_bundled_vendors_validate(workspace: Path):
    result = run_cli("validate", cwd=workspace)
    assert result.exit_code == 0, result.output


def test_missing_strong_function(workspace: Path):
    _edit(workspace, "droplet", "      syncStream: tangStreamSynchronize({stream})\n", "")
    err = _errors(workspace)
    assert re.search(r"vendors/droplet\.yaml:\d+:\d+: error: runtime\.device\.functions: "
                     r"strong DIPU function 'syncStream'", err), err


def test_missing_weak_function_is_fine(workspace: Path):
    _edit(workspace, "droplet", "      initializeVendor:\n        locals: {count: int}\n"
                                "        call: tangGetDeviceCount(&{count})\n", "")
    assert run_cli("validate", cwd=workspace).exit_code == 0


def test_unknown_parameter(workspace: Path):
    path = _edit(workspace, "droplet", "setDevice: tangSetDevice({devId})", "setDevice: tangSetDevice({device})")
    err = _errors(workspace)
    line = _line_of(path, "tangSetDevice({device})")
    assert f"vendors/droplet.yaml:{line}:" in err
    assert "runtime.device.functions.setDevice: unknown parameter '{device}'" in err
    assert "(available: devId)" in err


def test_reduce_uses_header_parameter_names(workspace: Path):
    _edit(workspace, "droplet", "pcclReduce({sendbuf}", "pcclReduce({sendBuf}")
    assert "unknown parameter '{sendBuf}'; did you mean 'sendbuf'" in _errors(workspace)


def test_call_name_not_identifier(workspace: Path):
    path = _edit(workspace, "droplet", "syncDevice: tangDeviceSynchronize()", "syncDevice: tang-DeviceSync()")
    err = _errors(workspace)
    assert f"vendors/droplet.yaml:{_line_of(path, 'tang-DeviceSync')}:" in err
    assert "call name 'tang-DeviceSync' is not a C identifier" in err


def test_type_not_identifier(workspace: Path):
    path = _edit(workspace, "droplet", "    stream: tangStream_t\n", "    stream: tang Stream_t!\n")
    err = _errors(workspace)
    assert f"vendors/droplet.yaml:{_line_of(path, 'tang Stream_t!')}:" in err
    assert "runtime.types.stream" in err and "C type name" in err


def test_undefined_checker(workspace: Path):
    path = _edit(workspace, "droplet", "  device:\n    checker: tang\n", "  device:\n    checker: tnag\n")
    err = _errors(workspace)
    assert f"vendors/droplet.yaml:{_line_of(path, 'checker: tnag')}:" in err
    assert "checker 'tnag' is not defined under runtime.checkers; did you mean 'tang'" in err


def test_unknown_function_key(workspace: Path):
    _edit(workspace, "droplet", "      releaseStream: noop\n", "      releaseStream: noop\n      relaseStream: noop\n")
    assert "unknown key 'relaseStream'; did you mean 'releaseStream'" in _errors(workspace)


def test_pattern_on_wrong_function(workspace: Path):
    _edit(workspace, "droplet", "syncStream: tangStreamSynchronize({stream})",
          "syncStream: {pattern: malloc, call: \"tangStreamSynchronize({stream})\"}")
    assert "pattern 'malloc' applies to mallocDevice, not syncStream" in _errors(workspace)


def test_value_function_needs_return(workspace: Path):
    _edit(workspace, "droplet", "        return: \"{count}\"\n", "")
    assert "getDeviceCount returns int: add return:" in _errors(workspace)


def test_unsupported_stub_renders_torch_check(workspace: Path):
    _edit(workspace, "droplet", "syncStream: tangStreamSynchronize({stream})", "syncStream: unsupported")
    assert run_cli("render", "--vendor", "droplet", cwd=workspace).exit_code == 0
    text = (workspace / "generated/droplet/dipu/torch_dipu/csrc_dipu/vendor/droplet/deviceimpl.cpp").read_text()
    assert 'TORCH_CHECK(false, "droplet: syncStream is not supported");' in text
