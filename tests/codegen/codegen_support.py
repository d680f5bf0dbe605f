"""Shared helpers of the codegen tests: the proved kernels and their real certificates.

Certificates come from `verify_proc` and are cached for the session (block_reduce takes ~10 s).
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import pytest
from conftest import expectations, kernel_files

from verifier.codegen.instrs import DEVICE_LOWERINGS
from verifier.encode import Options, verify_proc
from verifier.lang.ir import ir
from verifier.load.load import load_procs
from verifier.lang.ir.printer import ir_hash
from verifier.results import Certificate, Verdict

HERE = Path(__file__).resolve().parent
LOCAL_KERNELS = HERE / "codegen_kernels.py"


def proved_cases(slow: bool = True) -> list[tuple[Path, str]]:
    """(file, proc) of every bundled kernel expected to be proved, then the local kernels;
    `slow=False` leaves out those whose file says `# test: slow` (a long proof: `-m slow`)."""
    return list(_proved_cases(slow))


@cache  # read by several test modules at collection and by `example` in tests
def _proved_cases(slow: bool) -> tuple[tuple[Path, str], ...]:
    cases = [(e.file, e.proc) for f in kernel_files() for e in expectations(f)
             if e.verdict == "proved" and (slow or not e.slow)]
    cases += [(LOCAL_KERNELS, p.name) for p in load_procs(LOCAL_KERNELS)]
    return tuple(cases)


def default_cases() -> list[tuple[Path, str]]:
    """What the default run lowers: of the bundled kernels one per folder (the shortest file),
    and every local kernel; the others are `extended` (.ci/run; issue 20)."""
    quick = proved_cases(slow=False)
    first: dict[Path, tuple[Path, str]] = {}
    for c in sorted(quick, key=lambda c: (c[0].stat().st_size, c)):
        first.setdefault(c[0].parent, c)
    return [c for c in quick if c in first.values() or c[0] == LOCAL_KERNELS]


def proved_params() -> list:  # type: ignore[type-arg]
    """`proved_cases()` as pytest params, marked slow where the file says so and `extended`
    where the default run leaves them out (`default_cases`)."""
    quick, kept = set(proved_cases(slow=False)), set(default_cases())
    return [pytest.param(c, id=c[1], marks=[] if c in kept else
                         [pytest.mark.extended] if c in quick else [pytest.mark.slow])
            for c in proved_cases()]


@cache
def _procs(path: Path) -> dict[str, ir.Proc]:
    out = {}
    for p in load_procs(path):
        assert isinstance(p, ir.Proc), getattr(p, "error", p)
        out[p.name] = p
    return out


def load(path: Path, name: str) -> ir.Proc:
    return _procs(path)[name]


@cache
def _verify(path: Path, name: str) -> tuple[ir.Proc, Certificate | None, str]:
    p = load(path, name)
    result = verify_proc(p, Options(releases=True))  # as --emit-cuda asks (CG-R2)
    detail = "; ".join(f.message for f in result.findings)
    return p, result.certificate if result.verdict is Verdict.proved else None, detail


def certified(path: Path, name: str) -> tuple[ir.Proc, Certificate]:
    """The proc and the certificate of its proof. A kernel the verifier does not prove (its
    verdict is tests/test_examples.py's business) skips the calling codegen test."""
    p, cert, detail = _verify(path, name)
    if cert is None:
        pytest.skip(f"{name} is not proved by the current verifier: {detail}")
    return p, cert


def certified_or_none(path: Path, name: str) -> tuple[ir.Proc, Certificate] | None:
    p, cert, _ = _verify(path, name)
    return None if cert is None else (p, cert)


def hand_certified(path: Path, name: str) -> tuple[ir.Proc, Certificate]:
    """A proc with a hand-made certificate for its exact IR (constructs codegen lowers before
    the verifier proves them, or refuses whatever the proof)."""
    proc = load(path, name)
    return proc, Certificate(proc.name, ir_hash(proc), (), "hand-made for a test", "0")


def local(name: str) -> tuple[ir.Proc, Certificate]:
    return certified(LOCAL_KERNELS, name)


def example(name: str) -> tuple[ir.Proc, Certificate]:
    for path, proc_name in proved_cases():
        if proc_name == name:
            return certified(path, name)
    raise KeyError(name)


def uses_mbarriers(proc: ir.Proc, ring: bool | None = None) -> bool:
    """Whether `proc` allocates a `CudaMbarrier` (with `ring`, only an endgame ring one, True,
    or only a February one, False: specs/dialects.md DIAL-13)."""
    def walk(stmts: tuple[ir.Stmt, ...]) -> bool:
        return any((isinstance(s, ir.Alloc) and isinstance(s.typ, ir.BarrierType) and
                    str(s.typ.mech) == "CudaMbarrier" and
                    (ring is None or (s.typ.ring is not None) == ring)) or
                   walk(getattr(s, "body", ())) or walk(getattr(s, "orelse", ()))
                   for s in stmts)
    return walk(proc.body)


def unlowered_construct(proc: ir.Proc) -> str | None:
    """The first construct of `proc` that codegen refuses by design (mbarriers in a cluster or
    multicast, events, tensor maps, trailing barriers, wgmma fences, instructions on packed
    registers without a lowering row (the copies of CG-I2 have one): specs/codegen.md), or
    None."""

    def walk(stmts: tuple[ir.Stmt, ...], cluster: int = 1) -> str | None:
        for s in stmts:
            if isinstance(s, ir.DeviceFunction):
                cluster = s.cfg.clusterDim
            if isinstance(s, ir.Alloc) and isinstance(s.typ, ir.BarrierType) and \
                    str(s.typ.mech) == "CudaEvent":
                return "CudaEvent"
            if isinstance(s, ir.Alloc) and isinstance(s.typ, ir.BarrierType) and \
                    str(s.typ.mech) == "CudaMbarrier" and cluster > 1:
                return "CudaMbarrier in a cluster"
            if isinstance(s, ir.Arrive) and (len(s.targets) > 1 or any(
                    isinstance(a, ir.Interval) for a in s.targets[0].idx)):
                return "multicast Arrive"
            if isinstance(s, ir.WindowStmt) and s.special is not None:
                return "tensor map"
            if isinstance(s, ir.Call) and s.trailing:
                return "trailing barrier"
            if isinstance(s, ir.Fence) and "wgmma" in str(s.first):
                return "wgmma fence"
            if isinstance(s, ir.Call) and any(getattr(p, "formal_mem", "") == "CudaRmemPacked32"
                                              for p in getattr(s.callee, "params", ())) \
                    and s.callee.name not in DEVICE_LOWERINGS:
                return "packed registers (CudaRmemPacked32)"
            for child in ("body", "orelse"):
                found = walk(getattr(s, child, ()), cluster)
                if found:
                    return found
        return None
    return walk(proc.body)


# $SPORKBENCH: a sporkbench checkout, or several separated by os.pathsep (the first is used here;
# test_codegen_sporkbench.py runs them all)
SPORKBENCH = Path(os.environ.get("SPORKBENCH", str(HERE.parents[2] / "sporkbench"))
                  .split(os.pathsep)[0])
SM90A_GEMMS = SPORKBENCH / "examples" / "Sm90a_gemm"


def sporkbench_proc(path: Path, suffix: str) -> ir.Proc:
    """The one proc of a sporkbench file whose name ends with `suffix`, loaded without the
    file's own sync_check calls (upstream's checker, not ours)."""
    saved = ir.SYNC_CHECK_HOOK[0]
    ir.SYNC_CHECK_HOOK[0] = lambda p, sizes: None
    try:
        (p,) = [q for q in load_procs(path) if q.name.endswith(suffix)]
    finally:
        ir.SYNC_CHECK_HOOK[0] = saved
    return p
