"""Verdict and proof time of every proc sporkbench's Sm80 / gemv / f16 / legacy / Sm90a example
files build, run unchanged through spork-verify (issue 8).

Usage: python3 benchmarks/sporkbench_sm80.py SPORKBENCH_CHECKOUT [--upstream EXO_CHECKOUT]

Each file runs as `spork-verify --format json FILE` would (isolated loading, the CLI's
defaults). With --upstream, upstream's own `sync_check` at L=1, M=N=K=1024 is timed per proc
when that checkout's `exo` imports here (it needs its compiled checker); otherwise the column
says "not measured". Prints a table and the machine load (os.getloadavg()).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from verifier.cli import main as cli_main  # noqa: E402

FOLDERS = ("Sm80_gemm", "gemv", "f16_experiment", "legacy_gemm", "Sm90a_gemm")
SIZES_1024 = {"L": 1, "M": 1024, "N": 1024, "K": 1024, "K_cta": 1024, "K_splits": 1,
              "cluster_K": 1024, "K_split": 1}


def example_files(checkout: Path) -> list[Path]:
    out = []
    for folder in FOLDERS:
        out += sorted((checkout / "examples" / folder).glob("exocc_*.py"))
    return out


def run_file(path: Path) -> tuple[list[dict], float]:
    buf = io.StringIO()
    start = time.perf_counter()
    with redirect_stdout(buf):
        cli_main(["--format", "json", str(path)])
    wall = time.perf_counter() - start
    return json.loads(buf.getvalue()).get("results", []), wall


def upstream_sync_check_times(exo_checkout: Path, path: Path) -> dict[str, float] | str:
    """Upstream's sync_check at 1024^3 per proc, timed in a child python with that exo."""
    probe = subprocess.run([sys.executable, "-c", "import exo.spork"], capture_output=True,
                           env={**os.environ, "PYTHONPATH": str(exo_checkout / "src")})
    if probe.returncode != 0:
        return "not measured (upstream exo does not import here)"
    script = f"""
import json, sys, time, runpy, exo
sys.path.insert(0, {str(path.parent)!r})
g = runpy.run_path({str(path)!r})
out = {{}}
for v in list(g.values()):
    if isinstance(v, exo.Procedure):
        args = [a.name() for a in v.args()] if hasattr(v, 'args') else []
        sizes = {{k: val for k, val in {SIZES_1024!r}.items() if k in args}}
        t = time.perf_counter(); v.sync_check(**sizes); out[v.name()] = time.perf_counter() - t
print(json.dumps(out))
"""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / path.parent.name
        shutil.copytree(path.parent, copy)
        r = subprocess.run([sys.executable, "-c", script.replace(str(path.parent), str(copy))],
                           capture_output=True, text=True, cwd=copy,
                           env={**os.environ, "PYTHONPATH": str(exo_checkout / "src")})
    if r.returncode != 0:
        return f"not measured ({r.stderr.strip().splitlines()[-1:] or ['failed']})"
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path)
    ap.add_argument("--upstream", type=Path)
    args = ap.parse_args(argv)
    print(f"load average before: {os.getloadavg()}")
    print(f"{'file':58} {'proc':56} {'verdict':12} {'proof s':>8} {'file s':>7}  upstream "
          "sync_check 1024^3")
    for path in example_files(args.checkout):
        with tempfile.TemporaryDirectory() as tmp:  # the files write a .json next to them
            copy = Path(tmp) / path.parent.name
            shutil.copytree(path.parent, copy, symlinks=True)
            template = path.parent / "template"
            results, wall = run_file(copy / path.name)
        upstream = (upstream_sync_check_times(args.upstream, path) if args.upstream
                    else "not measured (no --upstream)")
        rel = f"{path.parent.name}/{path.name}"
        for r in results or [{"proc": "-", "verdict": "no result", "time_s": 0.0}]:
            up = upstream.get(r["proc"], "not measured") if isinstance(upstream, dict) \
                else upstream
            up_text = f"{up:.3f} s" if isinstance(up, float) else up
            reason = ""
            if r["verdict"] in ("rejected", "unsupported", "refuted") and r.get("findings"):
                f = r["findings"][0]
                reason = f"  [{f.get('kind')}/{f.get('code')}: {f.get('message', '')[:60]}]"
            print(f"{rel:58} {r['proc']:56} {r['verdict']:12} {r.get('time_s', 0):8.2f} "
                  f"{wall:7.1f}  {up_text}{reason}")
        del template
    print(f"load average after: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
