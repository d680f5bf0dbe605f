"""The GPU architecture an emitted file needs, and the nvcc flags that build it (LANG-8.2).

Reads the proc's device functions and the instructions it calls; produces the target name
(`sm_80`, `sm_90`, `sm_90a`, `sm_100a`), the nvcc flags of each target, and the preprocessor
guard the file starts with, so that compiling for a target that lacks a feature stops with a
message naming the flags instead of a ptxas error. sm_90 brings clusters, TMA and
`mbarrier.try_wait`; wgmma is an arch-specific (`a`) feature. nvcc 13's `-arch=sm_90a` also
embeds compute_90 PTX, on which ptxas rejects wgmma, so the flags name the arch-specific virtual
architecture alone (as upstream's sporkbench build does); likewise tcgen05 needs
`compute_100a` (BW-CG-1). Non-goals: running nvcc.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from verifier.codegen.sm100 import TCGEN05_SYNC
from verifier.lang.ir import ir

NVCC_FLAGS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "sm_80": ("-arch=compute_80", "-code=sm_80,compute_80"),
    "sm_90": ("-arch=compute_90", "-code=sm_90,compute_90"),
    "sm_90a": ("-arch=compute_90a", "-code=sm_90a,compute_90a"),
    "sm_100a": ("-arch=compute_100a", "-code=sm_100a,compute_100a"),
})

# What each target adds, for the guard's message and the header line.
_WHY = {"sm_90": "clusters or TMA", "sm_90a": "wgmma", "sm_100a": "tcgen05 and tensor memory"}
# Whether a target is met, as a preprocessor condition on the device pass.
_MET = {"sm_90": "__CUDA_ARCH__ >= 900", "sm_90a": "defined(__CUDA_ARCH_FEAT_SM90_ALL)",
        "sm_100a": "defined(__CUDA_ARCH_FEAT_SM100_ALL)"}


def _clusters(stmts: tuple[ir.Stmt, ...]) -> bool:
    for s in stmts:
        if isinstance(s, ir.DeviceFunction) and s.cfg.clusterDim > 1:
            return True
        if _clusters(getattr(s, "body", ())) or _clusters(getattr(s, "orelse", ())):
            return True
    return False


def _tcgen05_sync(stmts: tuple[ir.Stmt, ...]) -> bool:
    for s in stmts:
        if any(getattr(s, tl, None) in TCGEN05_SYNC for tl in ("first", "second")):
            return True
        if _tcgen05_sync(getattr(s, "body", ())) or _tcgen05_sync(getattr(s, "orelse", ())):
            return True
    return False


def required_target(proc: ir.Proc, instr_names: Iterable[str]) -> str:
    """`sm_100a` for tcgen05 (BW-CG-1), `sm_90a` for wgmma, `sm_90` for clusters and TMA, else
    `sm_80`. Rules: LANG-8.2, BW-CG-1"""
    names = list(instr_names)
    if any(n.startswith("Sm100_") for n in names) or _tcgen05_sync(proc.body):
        return "sm_100a"
    if any(n.startswith("Sm90_") and ("mma" in n or "scale_d" in n) for n in names):
        return "sm_90a"
    if any(n.startswith("Sm90_") for n in names) or _clusters(proc.body):
        return "sm_90"
    return "sm_80"


# ThunderKittens' headers (TK-4): C++20, device lambdas, its include folder.
TK_FLAGS = ("-std=c++20", "--extended-lambda", "--expt-relaxed-constexpr",
            "-I", "THUNDERKITTENS/include")


def nvcc_command(target: str, source: str = "FILE.cu", thunderkittens: bool = False) -> str:
    """The compile command the header recommends."""
    flags = " ".join(NVCC_FLAGS["sm_90a" if target == "sm_90" else target])
    std = " ".join(TK_FLAGS) if thunderkittens else "-std=c++17"
    return f"nvcc {std} {flags} -c {source}"


def target_lines(proc: ir.Proc, target: str, thunderkittens: bool = False) -> list[str]:
    """The header line naming the target, and for sm_90 / sm_90a a guard that stops a device
    pass for an older or non-arch-specific target. Rules: LANG-8.2"""
    out = [f"// nvcc target {target}: {nvcc_command(target, thunderkittens=thunderkittens)}"]
    if target == "sm_80":
        return out
    message = (f"spork-verify: {proc.name} uses {_WHY[target]} ({target}); compile with "
               + " ".join(NVCC_FLAGS["sm_90a" if target == "sm_90" else target]))
    return out + [f"#if defined(__CUDA_ARCH__) && !({_MET[target]})",
                  f'#error "{message}"', "#endif"]
