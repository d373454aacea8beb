"""Measure deeplink-gen's speed as ratios within one run.

    python bench/bench.py [--runs 5] [--scale 10]

Reports (min and median of --runs):
  * `deeplink-gen --help` start-up (a subprocess);
  * `validate` of the bundled workspace (the CLI, in-process, after imports);
  * `render --all` of the bundled vendors into an empty directory (in-process);
  * `render --all` again with nothing changed (and asserts it rewrote no file);
  * a 400-op workspace rendered for one vendor with autocompare on, full and unchanged;
  * a synthetic catalog built from real torch ops at 1x, 2x, ... --scale times the
    bundled catalog's size, rendered for one vendor with autocompare on, to show
    how time grows with the op count (per-op cost should stay flat).
In-process numbers exclude Python start-up and imports (a warm-up run comes
first). Times are wall-clock seconds on this machine; compare the ratios.
"""

from __future__ import annotations

import argparse
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
from deeplink_gen.interfaces import aten  # noqa: E402
from deeplink_gen.cli import main as cli  # noqa: E402
from deeplink_gen.plan.args import ArgKind  # noqa: E402
from deeplink_gen.plan.signature import signature_of  # noqa: E402


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


def render(root: Path, out: Path, *select: str) -> str:
    return run("-C", str(root), "render", *(select or ("--all",)), "--out", str(out), "--allow-outside-workspace")


def synthetic_entries(count: int, taken: set[str]) -> list[str]:
    """Catalog entries for real torch ops with a simple tensor shape, each mapped
    to a well-formed DIOPI call (the call is arbitrary: this measures the tool)."""
    lines = []
    for name, op in aten.installed_table().ops.items():
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


def compile_rows() -> list:
    """Wall time to syntax-check camb's kernels as one file and as 2 shards compiled in parallel."""
    from concurrent.futures import ThreadPoolExecutor

    sys.path.insert(0, str(REPO / "tests"))
    from conftest import syntax_check  # the tests' g++ command line (torch + our declaration headers)

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for shards in (1, 2):
            out = Path(tmp) / f"s{shards}"
            render(REPO, out, "--vendor", "camb", "--shards", str(shards))
            sources = sorted((out / "camb").rglob("AutoGenedKernels*.cpp"))

            def build():
                with ThreadPoolExecutor(max_workers=2) as pool:
                    results = list(pool.map(lambda src: syntax_check(src, warnings=[]), sources))
                assert all(r.returncode == 0 for r in results), [r.stderr[-500:] for r in results]
            rows.append((f"g++ camb kernels, {shards} file(s), 2 jobs", timed(build, 1)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--compile", action="store_true",
                        help="also time g++ -fsyntax-only of camb's kernels: one file vs 2 shards with 2 jobs")
    args = parser.parse_args()
    runs = args.runs
    aten.installed_table()  # build the torch op cache outside the measurements
    rows = []

    help_t = timed(lambda: subprocess.run([sys.executable, "-m", "deeplink_gen", "--help"],
                                          check=True, capture_output=True), runs)
    rows.append(("deeplink-gen --help (process)", help_t))
    run("-C", str(REPO), "validate")
    rows.append(("validate bundled workspace", timed(lambda: run("-C", str(REPO), "validate"), runs)))

    def full_and_unchanged(label: str, root: Path, *select: str) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out"
            render(root, out, *select)
            full = timed(lambda: (shutil.rmtree(out, ignore_errors=True), render(root, out, *select)), runs)
            rows.append((f"{label}, empty output", full))

            def again():
                assert render(root, out, *select).startswith("0 written"), "a no-change render rewrote files"
            rows.append((f"{label}, nothing changed", timed(again, runs)))

    full_and_unchanged("render --all (3 vendors)", REPO)
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
            t = timed(lambda: (shutil.rmtree(root / "out", ignore_errors=True),
                               render(root, root / "out", "--vendor", "camb", "--autocompare")), max(2, runs // 2))
            scaling.append((factor, n, t))

    if args.compile:
        rows.extend(compile_rows())

    base = rows[1][1][0]
    print(f"{'measurement':40} {'min s':>8} {'median s':>9} {'x validate':>11}")
    for label, (mn, med) in rows:
        print(f"{label:40} {mn:8.3f} {med:9.3f} {mn / base:11.2f}")
    print()
    print(f"synthetic catalog, one vendor, autocompare on (bundled catalog: {bundled} ops)")
    print(f"{'scale':>6} {'ops':>6} {'min s':>8} {'median s':>9} {'ms/op':>7}")
    for factor, n, (mn, med) in scaling:
        print(f"{factor:>5}x {n:6d} {mn:8.3f} {med:9.3f} {1000 * mn / n:7.2f}")


if __name__ == "__main__":
    main()
