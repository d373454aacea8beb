"""scripts/try_without_a_chip.py, in the parts that run here without building DIPU: its checks name
what to fix, its copy of torch 2.2.2's CMake config configures with no CUDA toolkit where the wheel's
own does not, and its test runner gives each file a result, a cause and the library functions it
reached. (The whole run, DIPU built and its tests run, is a long job for a machine of its own.)"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from helpers import REPO, dipu_torch_python, torch_root

SCRIPT = REPO / "scripts" / "try_without_a_chip.py"


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("try_without_a_chip", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _checkout(root: Path, *files: str) -> Path:
    """A git checkout holding DIPU's top folder and *files* (empty)."""
    for name in ("dipu/CMakeLists.txt", "dipu/torch_dipu/__init__.py", *files):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).touch()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"],
                   check=True)
    return root


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("make, expected", [
    (lambda p: p, "is not a deeplink.framework checkout: it has no dipu/CMakeLists.txt"),
    (lambda p: _checkout(p), "a submodule is missing (dipu/third_party/DIOPI/proto/include/diopi/functions.h): "
                             "run `git -C {root} submodule update --init --recursive`"),
])
def test_a_checkout_it_cannot_use_is_named_with_the_fix(tmp_path: Path, make, expected: str):
    root = make(tmp_path / "dl")
    root.mkdir(exist_ok=True)
    done = _run("--dipu", str(root), "--work", str(tmp_path / "work"))
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1].startswith("error: check: "), done.stdout
    assert expected.format(root=root) in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_a_python_without_torch_is_told_what_to_install(script, tmp_path: Path):
    root = _checkout(tmp_path / "dl", *script.SUBMODULES)
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    done = _run("--dipu", str(root), "--work", str(tmp_path / "work"), "--python", str(bare / "bin" / "python"))
    assert done.returncode == 1
    last = done.stdout.splitlines()[-1]
    assert last == (f"error: check: {bare / 'bin' / 'python'} has no torch: `{bare / 'bin' / 'python'} -m pip install "
                    "torch==2.2.2 'numpy<2' expecttest torchvision==0.17.2`"), done.stdout


def test_a_python_with_another_torch_is_refused(script, tmp_path: Path):
    """This interpreter's torch (the one deeplink-gen reads schemas from) is not DIPU's."""
    root = _checkout(tmp_path / "dl", *script.SUBMODULES)
    version = subprocess.run([sys.executable, "-c", "import importlib.metadata as m; print(m.version('torch'))"],
                             capture_output=True, text=True, check=True).stdout.strip().split("+")[0]
    assert version != "2.2.2"
    done = _run("--dipu", str(root), "--work", str(tmp_path / "work"))
    assert done.returncode == 1
    assert done.stdout.splitlines()[-1].startswith(
        f"error: check: {sys.executable} has torch {version}, and hostsim's library is rendered for torch 2.2.2"), done.stdout


def _configure(project: Path, cmake_dir: Path, build: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["cmake", "-S", str(project), "-B", str(build), f"-DTorch_DIR={cmake_dir / 'Torch'}",
                           f"-DCaffe2_DIR={cmake_dir / 'Caffe2'}"], capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_torch_cmake_copy_configures_without_cuda(script, tmp_path: Path):
    """torch 2.2.2's wheel is a CUDA build whose CMake config looks for a CUDA toolkit; the copy finds
    Torch, and links `torch` to torch_cpu only."""
    wheel = torch_root(dipu_torch_python())
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(textwrap.dedent("""\
        cmake_minimum_required(VERSION 3.18)
        project(uses_torch CXX)
        find_package(Torch REQUIRED)
        get_target_property(linked torch INTERFACE_LINK_LIBRARIES)
        message(STATUS "torch links: ${linked}")
        """))
    run = script.Run(tmp_path / "dl", Path(sys.executable), tmp_path / "work", 1, 1, "test_*.py")
    script.step_torch_cmake(run, {"torch_dir": str(wheel)})
    copied = _configure(project, run.torch_copy / "share" / "cmake", tmp_path / "build-copy")
    assert copied.returncode == 0, copied.stdout + copied.stderr
    assert "torch links: torch_cpu_library\n" in copied.stdout
    # What the copy is for: the wheel's own config fails on this machine, which has no CUDA toolkit.
    if not Path("/usr/local/cuda").exists():
        assert _configure(project, wheel / "share" / "cmake", tmp_path / "build-wheel").returncode != 0


TEST_FILES = {
    "test_passes.py": """
        import unittest
        class T(unittest.TestCase):
            def test_ok(self): pass
            @unittest.skip("no")
            def test_skipped(self): pass
        unittest.main()
        """,
    "test_fails.py": """
        import unittest
        class T(unittest.TestCase):
            def test_good(self): pass
            def test_sum(self):
                'Its docstring is printed under its name.'
                self.assertEqual(1 + 1, 3)
        unittest.main()
        """,
    "test_imports.py": "import no_such_module_anywhere\n",
    "test_hangs.py": "import time\ntime.sleep(60)\n",
    "test_crashes.py": "import os\nos.abort()\n",
    "test_long.py": "raise RuntimeError('x' * 1000)\n",
    "test_reaches.py": """
        import os
        with open(os.environ["DEEPLINK_GEN_REACHED"], "a") as f:
            f.write("diopiAbs\\ndiopiAdd\\n")
        """,
}


def test_each_test_file_gets_a_result_a_cause_and_the_functions_it_reached(script, tmp_path: Path):
    root = tmp_path / "dl"
    tests = root / "dipu" / "tests" / "python" / "unittests"
    tests.mkdir(parents=True)
    for name, text in TEST_FILES.items():
        (tests / name).write_text(textwrap.dedent(text))
    library = root / script.LIBRARY / "functions" / "functions.cpp"
    library.parent.mkdir(parents=True)
    library.write_text("diopiError_t diopiAbs(int x) {\n}\ndiopiError_t diopiAdd(int x) {\n}\n"
                       "diopiError_t diopiMul(int x) {\n}\n")
    run = script.Run(root, Path(sys.executable), tmp_path / "work", 1, 5, "test_*.py")
    script.step_tests(run, {})
    rows = {line.split(" | ")[0][2:]: line.split(" | ")[1:]
            for line in (run.work / "results.md").read_text().splitlines() if line.startswith("| test_")}
    assert {name: row[0] for name, row in rows.items()} == {
        "test_crashes.py": "crash", "test_fails.py": "fail", "test_hangs.py": "timeout",
        "test_imports.py": "fail", "test_long.py": "fail", "test_passes.py": "pass", "test_reaches.py": "pass"}
    assert rows["test_fails.py"][3] == "test_sum: AssertionError: 2 != 3 |"
    assert rows["test_imports.py"][3] == "ModuleNotFoundError: No module named 'no_such_module_anywhere' |"
    assert rows["test_crashes.py"][3] == "killed by SIGABRT |"
    assert rows["test_hangs.py"][3] == "still running after 5 s |"
    assert rows["test_passes.py"][3] == "1 skipped |"
    assert rows["test_reaches.py"][2] == "2"
    assert rows["test_long.py"][3] == "RuntimeError: " + "x" * 223 + "... |"      # the log holds the rest
    text = (run.work / "results.md").read_text()
    assert "7 files: 2 pass, 3 fail, 1 timeout, 1 crash." in text
    assert "They reached 2 of the 3 functions" in text and "1 of the files that pass reached none" in text
    assert "Functions no file reached: diopiMul" in text
    assert (run.logs / "tests" / "test_fails.log").read_text().count("AssertionError") == 1
