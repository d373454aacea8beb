"""What the tests share: the repository (the bundled workspace), the CLI
in-process and as a process, editing a scratch workspace and finding lines
in it, a stand-in DIPU checkout and the real `git apply`, and a C++ syntax
checker against torch's headers plus our own DIPU/DIOPI declaration headers."""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from click.testing import CliRunner

from deeplink_gen.cli import main
from deeplink_gen.model import TorchVersion

REPO = Path(__file__).resolve().parent.parent
# A stand-in for a deeplink.framework 9dd38082 checkout: the lines the onboarding patches need.
DIPU_CHECKOUT = REPO / "tests" / "fixtures" / "dipu_checkout"
# The newest torch DIPU 9dd38082 builds with (DIPU_SUPPORT_TORCHS in dipu/CMakeLists.txt).
DIPU_TORCH = "2.2.2"
INCLUDE = REPO / "tests" / "include"
# The example vendors this repository bundles (vendors/*.yaml), sorted.
BUNDLED_VENDORS = tuple(sorted(p.stem for p in (REPO / "vendors").glob("*.yaml")))
OPS = "dipu/torch_dipu/csrc_dipu/aten/ops"
KERNELS = f"{OPS}/AutoGenedKernels.cpp"     # the kernels rendered as one file (--shards 1)
KERNELS_0 = f"{OPS}/AutoGenedKernels_0.cpp"  # the first of the shards a render writes by default


def kernel_files(vendor: Path) -> list[Path]:
    """The rendered kernel files of the vendor folder *vendor* (generated/<name>): its shards, or its one file."""
    return sorted((vendor / OPS).glob("AutoGenedKernels*.cpp"))


def kernels(vendor: Path, pasted: bool = True) -> str:
    """The text of every kernel file of the vendor folder *vendor*, one after another; *pasted*: each
    as the compiler reads it (with_pasted)."""
    return "".join(with_pasted(f) if pasted else f.read_text(encoding="utf-8") for f in kernel_files(vendor))


def with_pasted(cpp: Path) -> str:
    """A rendered kernels file as the compiler reads it: each C++ text of its .pasted.inc (with
    its #line) in place of the lines that include it there."""
    text = cpp.read_text(encoding="utf-8")
    inc = cpp.with_name(cpp.stem + ".pasted.inc")
    if not inc.exists():
        return text
    bodies = dict(re.findall(r"^#ifdef (\w+)\n(.*?)\n#endif\n(?=\n#ifdef |\Z)", inc.read_text(encoding="utf-8"),
                             re.S | re.M))
    return re.sub(r"^#define (DEEPLINK_GEN_PASTE_\w+)\n#include DEEPLINK_GEN_PASTED\n#undef \1$",
                  lambda m: bodies.pop(m.group(1)), text, flags=re.M)


def run_cli(*args: str, cwd: Path | None = None):
    """Invoke the CLI in-process; returns click's Result (exit_code, stdout, stderr)."""
    argv = list(args)
    if cwd is not None:
        argv = ["-C", str(cwd), *argv]
    return CliRunner().invoke(main, argv, catch_exceptions=False)


def run_subprocess(*args: str, cwd: Path | None = None, env: dict | None = None,
                   timeout: float = 300, memory: int | None = None) -> subprocess.CompletedProcess:
    """This checkout's CLI as a process, from any *cwd*; a run past *timeout*
    seconds (a hang) raises subprocess.TimeoutExpired, and with *memory* its
    address space is limited to that many bytes (a runaway read fails there)."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), full_env.get("PYTHONPATH")]))
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "deeplink_gen", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout,
                          preexec_fn=limit if memory is not None else None)


def coverage_report(root: Path, *args: str) -> dict:
    """`coverage --format json` of the workspace at *root*, parsed."""
    result = run_cli("coverage", "--format", "json", *args, cwd=root)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def native_functions_yaml() -> str:
    """The installed torch's native_functions.yaml (through torchgen's package data)."""
    spec = importlib.util.find_spec("torchgen")
    root = Path(next(iter(spec.submodule_search_locations)))
    return (root / "packaged" / "ATen" / "native" / "native_functions.yaml").read_text()


CATALOG = REPO / "deeplink_gen" / "catalog"


def copy_workspace(dest: Path, *, own_catalog: bool = True) -> Path:
    """A scratch copy of the bundled workspace (vendors, no output). With
    *own_catalog* the bundled catalog is copied into its catalog/ and switched
    off in deeplink-gen.yaml, so tests can edit catalog files; without, it uses
    the bundled catalog as a user's workspace does."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "vendors", dest / "vendors")
    if own_catalog:
        shutil.copytree(CATALOG, dest / "catalog")
        (dest / "deeplink-gen.yaml").write_text("bundled_catalog: false\n")
    return dest


def edit(path: Path, old: str, new: str) -> Path:
    """Replace the first *old* in *path* by *new*; *old* must be there."""
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))
    return path


def line_of(path: Path, needle: str) -> int:
    """The 1-based number of the first line of *path* that contains *needle*."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in {path}")


def replace_section(path: Path, text: str) -> int:
    """Append *text* (top-level sections) to a YAML file after removing the
    sections of the same names; returns the line where *text* starts."""
    data = path.read_text()
    for key in re.findall(r"^(\w+):", text, re.M):
        data = re.sub(rf"^{key}:\n(?:[ #].*\n|\n)*", "", data, flags=re.M)
    if not data.endswith("\n"):
        data += "\n"
    path.write_text(data + text)
    return data.count("\n") + 1


def drop_section(path: Path, key: str) -> None:
    """Remove the top-level section *key* (and the comment lines after it) from a YAML file."""
    data = path.read_text()
    assert re.search(rf"^{key}:\n", data, re.M), f"no {key}: in {path}"
    path.write_text(re.sub(rf"^{key}:\n(?:[ #].*\n|\n)*", "", data, flags=re.M))


def error_lines(result) -> list[str]:
    """The error lines of a run that must fail cleanly: exit 1, no traceback."""
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    return [line for line in result.stderr.splitlines() if ": error: " in line]


def dipu_checkout(dest: Path, diopi: bool = True) -> Path:
    """A scratch copy of the checkout fixture (file modes kept); *diopi* False
    leaves dipu/third_party/DIOPI empty, as in a clone without submodules."""
    shutil.copytree(DIPU_CHECKOUT, dest)
    if not diopi:
        diopi_dir = dest / "dipu" / "third_party" / "DIOPI"
        shutil.rmtree(diopi_dir)
        diopi_dir.mkdir()
    return dest


def git_apply(patch: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The real `git apply -v ARGS PATCH` in *cwd*, which is never taken for a
    subfolder of another repository (git would skip every file and succeed)."""
    env = dict(os.environ, GIT_CEILING_DIRECTORIES=str(cwd.parent))
    proc = subprocess.run(["git", "apply", "-v", *args, str(patch)], cwd=cwd, env=env, capture_output=True, text=True)
    assert "Skipped patch" not in proc.stderr, proc.stderr
    return proc


def tree_state(root: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file below *root*: its bytes, mtime (ns) and mode."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            st = p.stat()
            out[p.relative_to(root).as_posix()] = (p.read_bytes(), st.st_mtime_ns, st.st_mode)
    return out


def vendor_dir(generated: Path, vendor: str) -> Path:
    """The rendered DIPU vendor folder of *vendor* under a generated/ root."""
    return generated / vendor / "dipu/torch_dipu/csrc_dipu/vendor" / vendor


@functools.lru_cache(maxsize=1)
def diopi_include() -> Path:
    """DIOPI's proto headers (diopi/diopirt.h and every functions*.h), written
    from the bundled prototype snapshot, which is extracted from the real
    headers: the declarations the tests compile against are the snapshot's."""
    from deeplink_gen.interfaces.diopi import HEADERS, load_snapshot

    protos = load_snapshot()
    root = Path(tempfile.mkdtemp(prefix="deeplink-gen-diopi-"))
    atexit.register(shutil.rmtree, root, True)
    out = root / "diopi"
    out.mkdir()
    banner = f"/* Declarations of DIOPI {protos.commit}, written from deeplink-gen's prototype snapshot. */\n"
    rt = protos.runtime_header
    lines = [banner, "#pragma once\n#include <stdint.h>\n"]
    lines += [f"#define {name} {value}".rstrip() + "\n" for name, value in rt.macros]
    lines += ['#if defined(__cplusplus)\n#include <iostream>\nextern "C" {\n#endif\n']
    lines += [f"{d};\n" for d in rt.declarations]
    lines += ["#if defined(__cplusplus)\n}\n#endif\n"]
    (out / "diopirt.h").write_text("".join(lines))
    for header in HEADERS:
        body = [f"DIOPI_RT_API DIOPI_ATTR_WEAK {p.returns} {p.name}({p.params_text});\n"
                for p in protos.runtime_functions.values() if p.header == header]
        body += [f"DIOPI_API diopiError_t {p.name}({p.params_text});\n"
                 for p in protos.functions.values() if p.header == header]
        (out / header).write_text("".join([banner, "#pragma once\n#include <diopi/diopirt.h>\n",
                                            '#if defined(__cplusplus)\nextern "C" {\n#endif\n', *body,
                                            "#if defined(__cplusplus)\n}\n#endif\n"]))
    return root


# The pytest configuration (set by conftest.py): lets a first-run download reach the terminal.
PYTEST_CONFIG = None


@contextlib.contextmanager
def uncaptured():
    """Output inside reaches the terminal although pytest captures the tests' output (with -q too)."""
    capture = PYTEST_CONFIG.pluginmanager.getplugin("capturemanager") if PYTEST_CONFIG is not None else None
    if capture is None:
        yield
        return
    with capture.global_and_fixture_disabled():
        yield


def download(what: str, where: Path, *commands: list[str], instead: str = "") -> None:
    """Run *commands* (pip installs) once, saying first what is fetched and where, with pip's
    progress shown: a first run of the tests would otherwise sit silent for minutes."""
    with uncaptured():
        print(f"\ndeeplink-gen tests, first run: downloading {what} into {where} (once; later runs reuse it)"
              f"{'; ' + instead if instead else ''}", file=sys.stderr, flush=True)
        for command in commands:
            subprocess.run(command, check=True, timeout=3600)
        print(f"deeplink-gen tests: {where} is ready", file=sys.stderr, flush=True)


def made_once(target: Path, make) -> None:
    """Run *make* (which fills the folder *target*) unless *target* is already marked ready,
    under an exclusive lock on a file beside it: test runs that share the cache (two CI jobs
    on one machine) wait for each other instead of racing to fill or replace the folder."""
    import fcntl

    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / ".ready").is_file():
            shutil.rmtree(target, ignore_errors=True)
            make()
            (target / ".ready").touch()


@functools.lru_cache(maxsize=1)
def dipu_torch_python() -> Path:
    """A Python whose torch is DIPU's (DIPU_TORCH) and which runs this
    checkout's deeplink-gen: DEEPLINK_GEN_TEST_DIPU_PYTHON, else a virtual
    environment made once under the user's cache directory that sees this
    environment's packages but has its own torch (pip install --no-deps: one
    wheel of about 700 MB, a CUDA build that runs on the CPU)."""
    given = os.environ.get("DEEPLINK_GEN_TEST_DIPU_PYTHON")
    if given:
        return Path(given)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    venv = cache / "deeplink-gen-tests" / f"torch-{DIPU_TORCH}"
    python = venv / "bin" / "python"
    made_once(venv, lambda: download(
        f"torch=={DIPU_TORCH} (one wheel of about 700 MB)", venv,
        [sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
        [str(python), "-m", "pip", "install", "--no-deps", "--progress-bar", "on", f"torch=={DIPU_TORCH}"],
        instead=f"to use a Python that has torch {DIPU_TORCH} instead, set DEEPLINK_GEN_TEST_DIPU_PYTHON=/path/to/python"))
    return python


# NVIDIA's own wheels of the CUDA and NCCL headers the cuda vendor compiles against, pinned
# (package==version, what it brings). The CUDA wheels share one release: nvidia-cuda-cccl-cu12
# 12.4.127 is yanked as a broken release (it lacks nv/target, which cuda_fp16.h includes).
CUDA_HEADER_WHEELS = (
    ("nvidia-cuda-runtime-cu12==12.6.77", "cuda_runtime"),   # cuda.h, cuda_runtime_api.h
    ("nvidia-cuda-nvcc-cu12==12.6.77", "cuda_nvcc"),         # crt/host_defines.h
    ("nvidia-cuda-cccl-cu12==12.6.77", "cuda_cccl"),         # nv/target
    ("nvidia-nccl-cu12==2.21.5", "nccl"),                    # nccl.h
)
CUDA_HEADERS_TAG = "12.6.77-nccl-2.21.5"


@functools.lru_cache(maxsize=1)
def cuda_headers() -> tuple[Path, ...]:
    """The include directories of the real CUDA runtime and NCCL headers: the pinned wheels,
    installed once (pip install --no-deps --target, about 300 MB) under the user's cache
    directory, beside the torch of dipu_torch_python()."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "deeplink-gen-tests"
    target = cache / f"cuda-headers-{CUDA_HEADERS_TAG}"
    made_once(target, lambda: download(
        "NVIDIA's CUDA runtime and NCCL header wheels (about 300 MB)", target,
        [sys.executable, "-m", "pip", "install", "--no-deps", "--progress-bar", "on", "--target", str(target),
         *(wheel for wheel, _ in CUDA_HEADER_WHEELS)]))
    dirs = tuple(target / "nvidia" / package / "include" for _, package in CUDA_HEADER_WHEELS)
    for header in ("cuda_runtime_api.h", "crt/host_defines.h", "nv/target", "nccl.h"):
        assert any((d / header).is_file() for d in dirs), f"{header} is in none of {target}'s include folders"
    return dirs


def sdk_include_flags(vendor: str) -> list[str]:
    """The SDK headers a vendor's runtime compiles against: the real CUDA and NCCL headers
    for cuda and for the cudalike fixture (-isystem: their own warnings are not ours), else
    our declaration headers under tests/include/sdk/<vendor> (none for hostsim, which needs
    no SDK)."""
    if vendor in ("cuda", "cudalike"):
        return [flag for d in cuda_headers() for flag in ("-isystem", str(d))]
    return [f"-I{INCLUDE / 'sdk' / vendor}"]


# CUDA 12's cuda_runtime_api.h #defines these names to newer entry points: a call of the
# name leaves the undefined symbol of the entry point.
CUDA_RENAMED = {"cudaGetDeviceProperties": "cudaGetDeviceProperties_v2"}


def compile_runtime_objects(generated: Path, vendor: str, out: Path, sources: tuple[str, ...],
                            warnings: list[str], extra: list[str] = ()) -> dict[str, subprocess.CompletedProcess]:
    """Each rendered runtime source of *vendor* compiled to out/<source>.o (g++ -c, in parallel)
    against its SDK headers (sdk_include_flags), the rendered vendorapi.h standing where
    DIPU's build links it."""
    vdir = vendor_dir(generated, vendor)
    overlay = out / "overlay"
    (overlay / "csrc_dipu" / "vendor").mkdir(parents=True, exist_ok=True)
    shutil.copy(vdir / "vendorapi.h", overlay / "csrc_dipu" / "vendor" / "vendorapi.h")

    def build(name: str):
        return name, syntax_check(vdir / name, mode=("-c", "-o", str(out / f"{name}.o")), overlay=overlay,
                                  extra=[*extra, *sdk_include_flags(vendor)], warnings=warnings)

    with ThreadPoolExecutor(max_workers=len(sources)) as pool:
        return dict(pool.map(build, sources))


def cuda_symbols(objects: list[Path]) -> set[str]:
    """The undefined CUDA (runtime and driver) and NCCL symbols of *objects* (nm -C: C
    functions appear as bare names)."""
    found = set()
    for obj in objects:
        out = subprocess.run(["nm", "-C", "--undefined-only", str(obj)], capture_output=True, text=True, check=True)
        found |= {line.split(None, 1)[1] for line in out.stdout.splitlines() if line.strip()}
    return {s for s in found if s.startswith(("cuda", "cu", "nccl"))}


def conform_test_source(generated: Path, vendor: str) -> Path:
    """The rendered diopi_test runtime of *vendor*, under DIOPI's impl/<diopi_impl>/ (cuda's is torch)."""
    found = sorted((generated / vendor).glob("dipu/third_party/DIOPI/impl/*/test/conform_test.cpp"))
    assert len(found) == 1, found
    return found[0]


def torch_root(python: Path | None = None) -> Path:
    """The torch package of *python* (default: this interpreter), found without importing torch."""
    if python is None:
        spec = importlib.util.find_spec("torch")
        return Path(next(iter(spec.submodule_search_locations)))
    out = subprocess.run([str(python), "-c", "import importlib.util as u; "
                          "print(next(iter(u.find_spec('torch').submodule_search_locations)))"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def torch_version_code(python: Path | None = None) -> str:
    """DIPU's 5-digit form of *python*'s torch version (2.2.2 -> 20202), as its build defines DIPU_TORCH_VERSION."""
    text = (torch_root(python) / "version.py").read_text()
    return TorchVersion.parse(re.search(r"__version__ = '([^']+)'", text).group(1)).dipu_code


def torch_include_flags(python: Path | None = None) -> list[str]:
    """torch's header directories (of *python*'s torch; default: this interpreter's)."""
    inc = torch_root(python) / "include"
    # -isystem: warnings in torch's own headers are not ours to fix.
    return ["-isystem", str(inc), "-isystem", str(inc / "torch" / "csrc" / "api" / "include"),
            "-isystem", str(inc / "kineto")]


def syntax_check_kernels(vendor: Path, **kwargs) -> subprocess.CompletedProcess:
    """syntax_check (with *kwargs*) of every kernel file of the vendor folder *vendor*, two at a
    time: the result of the first that failed, else of the last."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda f: syntax_check(f, **kwargs), kernel_files(vendor)))
    assert results, f"no kernel file in {vendor}"
    return next((r for r in results if r.returncode), results[-1])


def syntax_check(source: Path, *, extra: list[str] = (), warnings: list[str] = ("-Wall", "-Wextra"),
                 torch: bool = True, python: Path | None = None, mode: tuple[str, ...] = ("-fsyntax-only",),
                 overlay: Path | None = None) -> subprocess.CompletedProcess:
    """g++ -fsyntax-only (or *mode*, such as ("-c", "-o", OBJ)) against our DIPU
    declaration headers, the DIOPI headers and the headers of *python*'s torch
    (default: this interpreter's). *overlay* is searched before our DIPU headers
    (a rendered vendorapi.h as overlay/csrc_dipu/vendor/vendorapi.h)."""
    abi = "1" if python is None else "0"      # DIPU's torch wheels are built with the pre-C++11 ABI
    cmd = ["g++", "-std=c++17", *mode, f"-D_GLIBCXX_USE_CXX11_ABI={abi}", *warnings,
           f"-DDIPU_TORCH_VERSION={torch_version_code(python)}", *([f"-iquote{overlay}", f"-I{overlay}"] if overlay else []),
           f"-I{INCLUDE / 'dipu'}", f"-I{diopi_include()}", f"-iquote{INCLUDE / 'dipu'}"]
    if torch:
        cmd += torch_include_flags(python)
    cmd += [*extra, str(source)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900)


# Chromium's switches for a headless run that touches no network and no profile of the user's.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1400,1000")


def chromium() -> str | None:
    """The chromium installed, if any."""
    return next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)


def browser_session(profile: Path):
    """A headless chromium driven by selenium, with a fresh profile in *profile*;
    the caller quits it. The driver is named explicitly, so selenium never
    looks for (or downloads) one."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver = chromium(), shutil.which("chromedriver")
    assert browser is not None, "chromium is not installed (Debian: apt-get install chromium chromium-driver)"
    assert driver is not None, f"{browser} is installed but chromedriver is not (Debian: apt-get install chromium-driver)"
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)
