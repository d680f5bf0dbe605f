"""Sporkbench's Sm90a GEMMs through --emit-cuda: shared memory before and after early releases
(specs/codegen.md CG-R1..R3), and whether nvcc builds the result for sm_90a (issue 9).

Usage: python3 benchmarks/sporkbench_sm90_smem.py SPORKBENCH_CHECKOUT [--proc SUBSTRING]
                                                   [--assume NAME=VALUE,...]

Each `examples/Sm90a_gemm/exocc_*.py` is loaded once (isolated, unchanged, in a scratch copy:
the files write a .json next to them); every proc whose name contains --proc is verified in a
fresh interpreter (a cold proof, no answer cache), and a proved proc's CUDA is emitted twice:
with its certificate (early releases used where proved) and with the same certificate stripped
of its releases (every allocation to the end of its scope: the layout before CG-R1), each
either fitting (bytes of dynamic SMEM) or ERR-L06 (the bytes it would need). The first is then
compiled by nvcc with the flags the file names. Printed per proc: verdict, wall and CPU seconds
of the proof (early releases included) and of the early releases alone, releases proved, SMEM
before and after (limit 232448 bytes), nvcc's result and seconds, and os.getloadavg(). The
machine is shared and noisy: compare CPU seconds, not wall seconds. With --assume, a proc
that is not proved is verified again under those assumed sizes (specs/cli.md CLI-11, as
`spork-verify --assume`), on a second row marked with them: its certificate binds them and its
host function checks them at run time (specs/codegen.md CG-A1).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import child_json, load_average, loaded_sm90a_gemms  # noqa: E402
from verifier.codegen.targets import NVCC_FLAGS  # noqa: E402

CHILD = """
import dataclasses, json, os, re, sys, time
from verifier.codegen import emit_cuda
from verifier.diagnostics import SporkError
from verifier.encode import Options, verify_proc
from verifier.load.load_protocol import read_reply
reply = read_reply(os.open(sys.argv[1], os.O_RDONLY))
proc = next(p for p in reply.procs if p.name == sys.argv[2])
wall, cpu = time.perf_counter(), time.process_time()
assumed = json.loads(sys.argv[4]) or None
r = verify_proc(proc, Options(releases=True, fixed_sizes=assumed))
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
release_s = sum(o.time_s for x in r.releases for o in x.obligations)

def smem(cert):
    try:
        text = emit_cuda(proc, cert)
    except SporkError as e:
        m = re.match(r"(\\d+) bytes of shared memory exceed", e.message)
        return (int(m[1]) if m else -1), None, e.message[:160]
    return int(re.search(r"exo_smemBytes = (\\d+);", text)[1]), text, ""

before = after = text = None
why = ""
if r.certificate is not None:
    before, _, _ = smem(dataclasses.replace(r.certificate, releases=()))
    after, text, why = smem(r.certificate)
    if text is not None:
        with open(sys.argv[3], "w") as f:
            f.write(text)
f = r.findings[0] if r.findings else None
print(json.dumps({"verdict": r.verdict.value, "wall": wall, "cpu": cpu, "release_s": release_s,
                  "releases": [[x.variable, x.proved] for x in r.releases],
                  "before": before, "after": after, "emitted": text is not None, "why": why,
                  "finding": f"{f.kind.value} {f.variable} line {f.loc.line}" if f else ""}))
"""


def nvcc(source: Path) -> tuple[str, float]:
    """nvcc's verdict on `source` for sm_90a (the flags targets.py names) and its seconds."""
    cmd = ["nvcc", "-std=c++17", *NVCC_FLAGS["sm_90a"], "-c", str(source), "-o",
           str(source.with_suffix(".o"))]
    start = os.times()
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    end = os.times()
    secs = (end.children_user + end.children_system) - (start.children_user +
                                                        start.children_system)
    ok = r.returncode == 0 and "warning" not in r.stderr
    return ("pass" if ok else "FAIL " + (r.stderr.strip().splitlines() or ["?"])[-1][:60]), secs


def row(procs_file: Path, name: str, tmp: Path, assumed: dict[str, int],
        has_nvcc: bool) -> str:
    """Prove, emit and build one proc (under `assumed` sizes); print its row; its verdict."""
    cu = tmp / f"{name}.cu"
    r = child_json([sys.executable, "-c", CHILD, str(procs_file), name, str(cu),
                    json.dumps(assumed)])
    built, nv_s = nvcc(cu) if r["emitted"] and has_nvcc else \
        ("no nvcc" if r["emitted"] else "-", 0.0)
    released = f"{sum(p for _, p in r['releases'])}/{len(r['releases'])}"
    note = r["why"] or r["finding"]
    label = name + "".join(f" [{k}={v}]" for k, v in assumed.items())
    print(f"{label:52} {r['verdict']:8} {r['wall']:7.2f} {r['cpu']:6.2f} "
          f"{r['release_s']:6.2f} {released:>8} {r['before'] or '-':>11} "
          f"{r['after'] or '-':>10}  {built:11} {nv_s:10.2f}  {note}", flush=True)
    return str(r["verdict"])


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path)
    ap.add_argument("--proc", default="")
    ap.add_argument("--assume", default="", metavar="NAME=VALUE,...",
                    help="verify a proc that is not proved again with these sizes assumed")
    args = ap.parse_args(argv)
    assumed = {k: int(v) for k, _, v in (x.partition("=") for x in args.assume.split(",") if x)}
    has_nvcc = shutil.which("nvcc") is not None
    print(f"load average before: {load_average()}")
    print(f"{'proc':52} {'verdict':8} {'proof s':>7} {'cpu s':>6} {'rel s':>6} {'released':>8} "
          f"{'smem before':>11} {'smem after':>10}  {'nvcc sm_90a':11} {'nvcc cpu s':>10}  note")
    with tempfile.TemporaryDirectory() as tmp:
        for procs_file, procs in loaded_sm90a_gemms(args.checkout, Path(tmp)):
            for proc in procs:
                if args.proc not in proc.name:
                    continue
                verdict = row(procs_file, proc.name, Path(tmp), {}, has_nvcc)
                if verdict != "proved" and assumed:
                    row(procs_file, proc.name, Path(tmp), assumed, has_nvcc)
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
