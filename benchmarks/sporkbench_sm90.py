"""Sporkbench's Sm90a GEMMs: our verdict and proof time per proc (all sizes, and with the sizes
upstream's benchmark fixes, e.g. K_split=1 for the rmemC kernels) next to upstream's
`sync_check` at n = 1024, 2048, 4096 (issue 9).

Usage: python3 benchmarks/sporkbench_sm90.py SPORKBENCH_CHECKOUT [--proc SUBSTRING]
           [--upstream-python PYTHON] [--sizes 1024,2048,4096] [--repeat 3]
           [--upstream-k-split 1,2]

Sporkbench's ping_pong branch adds exocc_Sm90a_pingpong.py (`--proc pingpong`): those procs are
verified for all sizes and with K_split = 1 (sporkbench's cases run them so), and upstream's
sync_check is asked at each K_split of --upstream-k-split too; what it raises (a hazard, or
"not implemented" for the tmaC procs) is printed under the table.

Our side: each `examples/Sm90a_gemm/exocc_*.py` is loaded once (isolated, unchanged; the file's
own `sync_check` calls while loading are not counted) and every proc whose name contains --proc
is verified --repeat times (median), each time in a fresh interpreter that reads the loaded IR
back (load_protocol), as `spork-verify --no-cache --proc NAME` would run it: no answer, tiling
or other cache survives from one repeat to the next (in one process the second run of a proc
takes its answers from memory, discharge._MEMORY, and is twice as fast). Wall seconds of
`verify_proc`, the CPU seconds it used and the Z3 resource units of its queries are printed
(units are deterministic; wall and CPU depend on the load). The rmemC kernels write C
with plain stores, so two K_split tasks race on C (a real WAW the machine replays); they are
also verified with K_split = 1 assumed (`--assume K_split=1`, specs/cli.md CLI-11), the only
value sporkbench runs them with. Upstream's
side (with --upstream-python, an interpreter whose `exo` has the camspork checker): the same
proc rebuilt by upstream's template and `sync_check`-ed once per size, as upstream's own
benchmark_sync_check.py sizes it (M = N = n, cluster_K = n / K_split), with CAMSPORK_JIT_DIR
in a scratch folder. Prints a table with the ratio and os.getloadavg(); the machine is shared
and noisy, so compare medians only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import child_json, load_average, loaded_sm90a_gemms  # noqa: E402

from verifier.load.load_scheduled import JIT_ENV, build_folder  # noqa: E402

UPSTREAM = """
import json, sys, time
sys.path.insert(0, {folder!r})
from template.make_Sm90a_gemm import make_Sm90a_gemm
from template.Sm90a_gemm_pre_config import Sm90aGemmConfig
out = {{}}
for name, (m, n, tma, split, cm, cn, ring, pp) in {configs!r}.items():
    cfg = Sm90aGemmConfig(m, n, ring, tma_to_gmem=tma, enable_split_k=split,
                          **({{"ping_pong": True}} if pp else {{}}))
    p = make_Sm90a_gemm(cfg, cm, cn)
    for k_split in ((4,) if split else {k_splits!r}):
        for sz in {sizes!r}:
            key = name + "@" + str(sz) + ("" if k_split in (1, 4) else "/K" + str(k_split))
            t = time.perf_counter()
            try:
                p.sync_check(L=1, M=sz, N=sz, cluster_K=sz // k_split, K_split=k_split)
                out[key] = time.perf_counter() - t
            except Exception as e:  # a hazard (CamsporkError) or what it cannot check
                first = (str(e).strip().splitlines() or [""])[0]
                out[key] = type(e).__name__ + ": " + first.rsplit("): ", 1)[-1][:60]
print(json.dumps(out))
"""


def config_of(name: str) -> tuple[int, int, bool, bool, int, int, int, bool]:
    """(smem_M, smem_N, tma_to_gmem, split_k, ncta_M, ncta_N, RING, ping_pong) from a proc name
    such as xgemm_Sm90a_r4_m2n1_m128n256_splitK or xgemm_Sm90a_r3_m1n2_m256n96_tmaC_pingpong
    (sporkbench's ping_pong branch)."""
    parts = name.split("_")
    ring = int(parts[2][1:])
    cm, cn = int(parts[3][1]), int(parts[3][3])
    m, n = parts[4][1:].split("n")
    split = parts[5] == "splitK"
    return int(m), int(n), parts[5] != "rmemC", split, cm, cn, ring, parts[-1] == "pingpong"


def upstream_times(python: str, checkout: Path, names: list[str], sizes: list[int],
                   k_splits: list[int]) -> dict[str, float | str] | str:
    """Seconds of upstream's sync_check per proc@size (and @size/K<k> for the extra K_split
    values of non-split-K procs), or the first line of what it raised. Upstream's checker is
    built once per interpreter in spork-verify's private build folder (SCHED-7)."""
    jit = build_folder(python)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "Sm90a_gemm"
        shutil.copytree(checkout / "examples" / "Sm90a_gemm", folder)
        script = UPSTREAM.format(folder=str(folder), sizes=sizes, k_splits=k_splits,
                                 configs={n: config_of(n) for n in names})
        r = subprocess.run([python, "-c", script], capture_output=True, text=True, cwd=jit,
                           env={**os.environ, JIT_ENV: str(jit / "jit")})
    if r.returncode != 0:
        return f"not measured ({(r.stderr.strip().splitlines() or ['failed'])[-1][:80]})"
    return json.loads(r.stdout.strip().splitlines()[-1])


CHILD = """
import json, os, sys, time
from verifier.encode import verify_proc
from verifier.encode.verify import Options
from verifier.load.load_protocol import read_reply
reply = read_reply(os.open(sys.argv[1], os.O_RDONLY))
proc = next(p for p in reply.procs if p.name == sys.argv[2])
fixed = json.loads(sys.argv[3])
wall, cpu = time.perf_counter(), time.process_time()
r = verify_proc(proc, Options(fixed_sizes=fixed))
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
f = r.findings[0] if r.findings else None
print(json.dumps([r.verdict.value, wall, cpu, sum(o.rlimit for o in r.obligations),
                  f"{f.kind.value} {f.variable} line {f.loc.line}" if f else ""]))
"""


def ours(procs_file: Path, name: str, repeat: int, fixed: dict[str, int] | None
         ) -> tuple[str, float, float, int, str]:
    """(verdict, median wall s, median CPU s, units, first finding) of `repeat` fresh runs."""
    try:
        runs = [child_json([sys.executable, "-c", CHILD, str(procs_file), name,
                            json.dumps(fixed)]) for _ in range(repeat)]
    except RuntimeError as e:
        raise SystemExit(f"{name}: {e}") from None
    verdict, _, _, units, why = runs[-1]
    return verdict, statistics.median(x[1] for x in runs), \
        statistics.median(x[2] for x in runs), units, why


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path)
    ap.add_argument("--proc", default="")
    ap.add_argument("--upstream-python")
    ap.add_argument("--sizes", default="1024,2048,4096")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--upstream-k-split", default="1", help="K_split values upstream's "
                    "sync_check runs the non-split-K procs with (split-K: 4)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"load average before: {load_average()}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for procs_file, procs in loaded_sm90a_gemms(args.checkout, Path(tmp)):
            for proc in procs:
                if args.proc not in proc.name:
                    continue
                # the sizes sporkbench runs (its cases' K_split_max is 1 for these)
                fixed = {"K_split": 1} if "rmemC" in proc.name or \
                    proc.name.endswith("pingpong") else None
                rows.append((proc.name, "all sizes",
                             *ours(procs_file, proc.name, args.repeat, None)))
                if fixed:
                    rows.append((proc.name, "K_split=1",
                                 *ours(procs_file, proc.name, args.repeat, fixed)))
    names = sorted({r[0] for r in rows})
    k_splits = [int(k) for k in args.upstream_k_split.split(",")]
    up = upstream_times(args.upstream_python, args.checkout, names, sizes, k_splits) \
        if args.upstream_python else "not measured (no --upstream-python)"
    print(f"{'proc':40} {'sizes':10} {'verdict':9} {'ours s':>7} {'cpu s':>6} {'units':>11}  " +
          "  ".join(f"{'up ' + str(n):>9} {'ratio':>6}" for n in sizes) + "  finding")
    raised: list[str] = []
    for name, scope, verdict, secs, cpu, units, why in rows:
        cols = []
        for n in sizes:
            u = up.get(f"{name}@{n}") if isinstance(up, dict) else None
            if isinstance(u, str):
                raised.append(f"{name}@{n}: {u}")
            cols.append(f"{u:9.2f} {u / secs:6.1f}" if isinstance(u, float) else
                        f"{'raises' if u else '-':>9} {'-':>6}")
        print(f"{name:40} {scope:10} {verdict:9} {secs:7.2f} {cpu:6.2f} {units:11,}  " +
              "  ".join(cols) + f"  {why}")
    if isinstance(up, str):
        print(f"upstream: {up}")
    else:
        raised += [f"{k}: {v}" for k, v in up.items() if "/K" in k and isinstance(v, str)]
        raised += [f"{k}: no hazard ({v:.2f} s)" for k, v in up.items()
                   if "/K" in k and isinstance(v, float)]
        for line in sorted(set(raised)):
            print(f"upstream sync_check {line}")
    print(f"load average after: {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
