"""Measure deeplink-gen's speed as ratios within one run.

    python bench/bench.py [--runs 5] [--scale 10] [--dipu CHECKOUT]

Reports (min and median of --runs):
  * whole processes (`python -m deeplink_gen ...`, start-up and imports included),
    beside `python -c pass` and an import of the libraries a render runs on (click,
    jinja2, jsonschema, yaml, torchgen) as floors: `--help`; a full render into an empty
    output folder with an empty cache folder (cold: only the torch op index, built
    once per torch install when no shipped snapshot matches the torch, is kept),
    after an input changed (the stored model and rendered files miss; the op
    index and each op's stored code are kept, as after an edit
    that changes no op's plan), after a one-line edit of one op's custom code in the
    imported op file (each run adds one more line: the loop of a vendor engineer), with a warm cache (the rendered files are stored),
    and with nothing changed; for the
    workspace import-dipu makes of tests/fixtures/dipu (camb, --autocompare) and
    for the bundled workspace (--all); with --dipu CHECKOUT, of that
    deeplink.framework checkout's own op file instead, beside DIPU's generator
    run on it for camb as DIPU's build runs it, each row's median as a multiple
    of the generator's;
  * `validate` of the bundled workspace (the CLI, in-process, after imports);
  * `render --all` of the bundled vendors into an empty directory (in-process);
  * `render --all` again with nothing changed (and asserts it rewrote no file);
  * a 400-op workspace rendered for one vendor with autocompare on, full and unchanged;
  * a synthetic catalog built from real torch ops at 1x, 2x, ... --scale times the
    bundled catalog's size, rendered for one vendor with autocompare on, to show
    how time grows with the op count (per-op cost should stay flat).
In-process numbers exclude Python start-up and imports (a warm-up run comes
first) and store nothing (DEEPLINK_GEN_NO_CACHE=1), except the unchanged renders,
which use the stamps. Times are wall-clock seconds on this machine; compare the ratios.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from click.testing import CliRunner  # noqa: E402

from deeplink_gen import pipeline  # noqa: E402
from deeplink_gen.cli import main as cli  # noqa: E402
from deeplink_gen.interfaces import torch_snapshots  # noqa: E402
from deeplink_gen.translate.args import ArgKind  # noqa: E402
from deeplink_gen.translate.signature import signature_of  # noqa: E402


def timed(fn, runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return min(samples), statistics.median(samples)


def run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    if result.exit_code != 0:
        raise SystemExit(f"deeplink-gen {' '.join(args)} failed:\n{result.output}")
    return result.output


def uncached(fn):
    """*fn* run with DEEPLINK_GEN_NO_CACHE=1: the pipeline's own work, no stored result reused."""
    def wrapped():
        os.environ["DEEPLINK_GEN_NO_CACHE"] = "1"
        try:
            return fn()
        finally:
            del os.environ["DEEPLINK_GEN_NO_CACHE"]
    return wrapped


def render(root: Path, out: Path, *select: str) -> str:
    return run("-C", str(root), "render", *(select or ("--all",)), "--out", str(out), "--allow-outside-workspace")


def dipu_generator(checkout: Path, out: Path) -> list[str]:
    """DIPU's own kernel generator as its build runs it for camb (autogen_wrapped_code.sh; its extra
    features, autocompare among them, on)."""
    scripts = checkout / "dipu" / "scripts" / "autogen_diopi_wrapper"
    cmd = [sys.executable, str(scripts / "autogen_diopi_wrapper.py"), f"--out={out}",
           f"--config={scripts / 'diopi_functions.yaml'}", "--print_op_arg=True", "--use_diopi_adapter=False",
           "--print_func_call_info=True", "--generate_device_guard=True", "--enable_dipu_extra_feature=True",
           '--fun_config_dict={"current_device":"camb","current_torch_ver":"2.2.2"}']
    convert = checkout / "dipu" / "third_party" / "DIOPI" / "impl" / "camb" / "convert_config.yaml"
    return cmd + ([f"--convert_config={convert}"] if convert.is_file() else [])


def edit_catalog(path: Path) -> None:
    """One line of C++ comment added to the custom code (`code:` ... `|`) of the op nearest the middle of *path*."""
    lines = path.read_text().splitlines(keepends=True)
    blocks = [i for i, line in enumerate(lines) if re.match(r"\s+\w+: \|$", line) and i + 1 < len(lines)]
    if not blocks:
        sys.exit(f"{path}: no block of custom code to edit")
    at = min(blocks, key=lambda i: abs(i - len(lines) // 2)) + 1
    indent = re.match(r"\s*", lines[at]).group(0)
    lines.insert(at, f"{indent}// one line added by bench/bench.py\n")
    path.write_text("".join(lines))


def process_rows(runs: int, checkout: Path | None) -> list:
    """Whole-process wall times, each case with its own cache folder. With a
    deeplink.framework *checkout*, its op file is imported and rendered beside
    DIPU's generator run on it, and the rows say how many times its time each takes."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = dict(os.environ, PYTHONPATH=str(REPO), DEEPLINK_GEN_CACHE_DIR=str(tmp / "cache"))
        env.pop("DEEPLINK_GEN_NO_CACHE", None)
        # As installed from a wheel, which pip byte-compiles: every process reads bytecode, not source
        # (for DIPU's generator too; warmed by the runs before the timed ones).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        fixtures = REPO / "tests" / "fixtures" / "dipu"
        functions, convert = fixtures / "diopi_functions.yaml", fixtures / "camb_convert_config.yaml"
        if checkout is not None:
            functions = checkout / "dipu" / "scripts" / "autogen_diopi_wrapper" / "diopi_functions.yaml"
            real = checkout / "dipu" / "third_party" / "DIOPI" / "impl" / "camb" / "convert_config.yaml"
            convert = real if real.is_file() else convert
        imported = tmp / "imported"
        subprocess.run([sys.executable, "-m", "deeplink_gen", "import-dipu", "--functions", str(functions),
                        "--convert-config", f"camb={convert}", "--vendors", "camb", "--out", str(imported),
                        "--torch-version", "2.2.2"],
                       check=True, capture_output=True, env=env)
        out = tmp / "out"

        def command(root: Path, *select: str) -> list[str]:
            return [sys.executable, "-m", "deeplink_gen", "-C", str(root), "render", *select,
                    "--out", str(out), "--allow-outside-workspace"]

        def clear(*kinds: str) -> None:
            shutil.rmtree(out, ignore_errors=True)
            for kind in kinds:
                for path in (tmp / "cache").glob(f"store-*/{kind}"):
                    shutil.rmtree(path, ignore_errors=True)

        def case(label: str, cmd: list[str], before=lambda: None) -> None:
            samples = []
            for i in range(runs + 1):        # the first run, untimed, writes the bytecode
                before()
                start = time.perf_counter()
                subprocess.run(cmd, check=True, capture_output=True, env=env)
                if i:
                    samples.append(time.perf_counter() - start)
            rows.append((label, (min(samples), statistics.median(samples))))

        case("python -c pass (process)", [sys.executable, "-c", "pass"])
        case("deeplink-gen --help (process)", [sys.executable, "-m", "deeplink_gen", "--help"])
        case("import of the libraries a render runs on (process)",
             [sys.executable, "-c", "import click, jinja2, jsonschema, yaml, torchgen.model, torchgen.api.types"])
        if checkout is not None:
            case("DIPU's generator, camb, autocompare (process)", dipu_generator(checkout, tmp / "dipu.cpp"))
        subprocess.run(command(REPO, "--all"), check=True, capture_output=True, env=env)   # the op index
        ops = len(pipeline.load(imported).catalog.entries)
        source = "DIPU's op file" if checkout is not None else "DIPU fixture"
        vendors = len(list((REPO / "vendors").glob("*.yaml")))
        for label, root, cmd in ((f"import of {source} ({ops} ops), camb, --autocompare", imported,
                                  command(imported, "--vendor", "camb", "--autocompare")),
                                 (f"bundled workspace, --all ({vendors} vendors)", REPO, command(REPO, "--all"))):
            case(f"{label}: cold cache (process)", cmd, lambda: clear("[!a]*"))
            case(f"{label}: inputs changed (process)", cmd, lambda: clear("render", "model", "stamps", "warnings"))
            if root == imported:
                case(f"{label}: one op's custom code edited (process)", cmd,
                     lambda: edit_catalog(imported / "catalog" / "dipu.yaml"))
            case(f"{label}: warm cache, empty output (process)", cmd, lambda: clear())
            case(f"{label}: nothing changed (process)", cmd)
    return rows


def synthetic_entries(count: int, taken: set[str]) -> list[str]:
    """Catalog entries for real torch ops with a simple tensor shape, each mapped
    to a well-formed DIOPI call (the call is arbitrary: this measures the tool)."""
    lines = []
    for name, op in torch_snapshots.installed().ops.items():
        if len(lines) // 3 >= count:
            break
        if name in taken:
            continue
        try:
            sig = signature_of(op)
        except Exception:
            continue
        first = sig.params[0] if sig.params else None
        if first is None or first.kind not in (ArgKind.TENSOR, ArgKind.MUT_TENSOR):
            continue
        x = first.name
        kind = sig.kind.name
        if kind == "out" and [r.alias for r in sig.returns] == ["out"] and sig.param("out").kind == ArgKind.MUT_TENSOR:
            lines += [f"  {name}:", f"    call: diopiAbs(ctx, out, {x})", "    autocompare: true"]
        elif kind == "inplace" and first.kind == ArgKind.MUT_TENSOR and len(sig.returns) == 1:
            lines += [f"  {name}:", f"    call: diopiAbsInp(ctx, {x})", "    fallback_to_cpu: true"]
        elif (kind == "functional" and first.kind == ArgKind.TENSOR and len(sig.returns) == 1
              and sig.returns[0].is_tensor and sig.returns[0].name == "out"):
            lines += [f"  {name}:", f"    call: diopiAbs(ctx, out, {x})",
                      f"    alloc: {{out: 'nodispatch::empty_like({x})'}}"]
    return lines


def make_synthetic(root: Path, total: int) -> None:
    """The bundled workspace plus synthetic entries up to *total* catalog ops."""
    shutil.copytree(REPO / "vendors", root / "vendors")
    shutil.copytree(REPO / "deeplink_gen" / "catalog", root / "catalog")
    (root / "deeplink-gen.yaml").write_text("bundled_catalog: false\n")
    bundled = set(pipeline.load(REPO).catalog.names())
    extra = total - len(bundled)
    if extra > 0:
        entries = synthetic_entries(extra, bundled)
        (root / "catalog" / "zz_synthetic.yaml").write_text("ops:\n" + "\n".join(entries) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--dipu", type=Path, metavar="CHECKOUT",
                        help="a deeplink.framework checkout: render the import of its op file beside its own "
                             "generator (needs its DIOPI submodule for camb's convert_config.yaml)")
    args = parser.parse_args()
    runs = args.runs
    torch_snapshots.installed()  # read (or build) the op table renders use, outside the measurements
    rows = []

    os.environ["DEEPLINK_GEN_CACHE_DIR"] = tempfile.mkdtemp(prefix="deeplink-gen-bench-cache-")
    run("-C", str(REPO), "validate")
    rows.append(("validate bundled workspace", timed(lambda: run("-C", str(REPO), "validate"), runs)))

    def full_and_unchanged(label: str, root: Path, *select: str) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out"
            render(root, out, *select)
            full = timed(uncached(lambda: (shutil.rmtree(out, ignore_errors=True), render(root, out, *select))), runs)
            rows.append((f"{label}, empty output", full))

            def again():
                assert render(root, out, *select).startswith("0 written"), "a no-change render rewrote files"
            rows.append((f"{label}, nothing changed", timed(again, runs)))

    full_and_unchanged(f"render --all ({len(list((REPO / 'vendors').glob('*.yaml')))} vendors)", REPO)
    bundled = len(pipeline.load(REPO).catalog.entries)
    with tempfile.TemporaryDirectory() as tmp:
        make_synthetic(Path(tmp), 400)
        full_and_unchanged("400 ops, camb, --autocompare", Path(tmp), "--vendor", "camb", "--autocompare")

    scaling = []
    for factor in sorted({1, 2, max(1, args.scale // 2), args.scale}):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            make_synthetic(root, bundled * factor)
            n = len(pipeline.load(root).catalog.entries)
            t = timed(uncached(lambda: (shutil.rmtree(root / "out", ignore_errors=True),
                                        render(root, root / "out", "--vendor", "camb", "--autocompare"))),
                      max(2, runs // 2))
            scaling.append((factor, n, t))

    processes = process_rows(runs, args.dipu)

    base = rows[0][1][0]
    print(f"in-process (after imports)               {'min s':>8} {'median s':>9} {'x validate':>11}")
    for label, (mn, med) in rows:
        print(f"{label:40} {mn:8.3f} {med:9.3f} {mn / base:11.2f}")
    print()
    floor = processes[0][1][0]
    dipu = next((t for label, t in processes if label.startswith("DIPU's generator")), None)
    print(f"{'whole process':72} {'min s':>8} {'median s':>9} {'x python':>9}"
          + (f" {'x DIPU (median)':>16}" if dipu else ""))
    for label, (mn, med) in processes:
        print(f"{label:72} {mn:8.3f} {med:9.3f} {mn / floor:9.2f}" + (f" {med / dipu[1]:16.2f}" if dipu else ""))
    print()
    print(f"synthetic catalog, one vendor, autocompare on (bundled catalog: {bundled} ops)")
    print(f"{'scale':>6} {'ops':>6} {'min s':>8} {'median s':>9} {'ms/op':>7}")
    for factor, n, (mn, med) in scaling:
        print(f"{factor:>5}x {n:6d} {mn:8.3f} {med:9.3f} {1000 * mn / n:7.2f}")


if __name__ == "__main__":
    main()
