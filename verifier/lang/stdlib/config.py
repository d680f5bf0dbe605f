"""Device-function configuration objects (stage O, language.md §4.2, §4.6).

Built by Python evaluation of a `with` context; errors carry no location here, the parser adds
the `with` statement's position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from verifier.diagnostics import RejectedInput

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True, slots=True)
class CudaWarpConfig:
    name: str
    count: int
    setmaxnreg_dec: int | None = None
    setmaxnreg_inc: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.count, int) or self.count <= 0:
            raise RejectedInput(f"CudaWarpConfig({self.name!r}): count must be a positive int, "
                                f"not {self.count!r}", code="ERR-O06", rule="LANG-4.12")
        if self.setmaxnreg_dec is not None and self.setmaxnreg_inc is not None:
            raise RejectedInput(f"CudaWarpConfig({self.name!r}): at most one of setmaxnreg_dec "
                                "and setmaxnreg_inc", code="ERR-O06", rule="LANG-4.12")

    @property
    def setmaxnreg(self) -> int | None:
        return self.setmaxnreg_dec if self.setmaxnreg_dec is not None else self.setmaxnreg_inc


MAX_BLOCK_DIM = 1024  # CUDA: threads per CTA (LANG-4.4)
MAX_CLUSTER_DIM = 16  # CUDA: CTAs per cluster, non-portable maximum (LANG-4.4)


@dataclass(frozen=True, slots=True)
class CudaDeviceFunction:
    """`with CudaDeviceFunction(blockDim=..., clusterDim=..., warp_config=[...])` (LANG-4.4)."""

    blockDim: int
    clusterDim: int
    blocks_per_sm: int
    warp_config: tuple[CudaWarpConfig, ...]
    # upstream's keyword (endgame): the lowered kernel ends without its cluster barrier; sound
    # for a proved proc because every SMEM and mbarrier free is proved ordered after all
    # accesses, remote ones included (SEM-4.7, specs/codegen.md CG-X1). No effect on proofs.
    unsafe_no_shutdown_cluster_sync: bool

    def initial_warp_name(self) -> str | None:
        """With one warp variable its name is current from the start (COLL-2.13)."""
        return self.warp_config[0].name if len(self.warp_config) == 1 else None

    def __init__(self, blockDim: int | None = None, clusterDim: int = 1, blocks_per_sm: int = 1,
                 warp_config: list[CudaWarpConfig] | None = None,
                 unsafe_no_shutdown_cluster_sync: bool = False) -> None:
        if (blockDim is None) == (warp_config is None):
            raise RejectedInput("Provide exactly one of blockDim or warp_config",
                                code="ERR-O03", rule="LANG-4.4")
        if warp_config is not None:
            configs = tuple(warp_config)
            _check_warp_config(configs)
            block = 32 * sum(w.count for w in configs)
        else:
            if not isinstance(blockDim, int) or blockDim <= 0 or blockDim % 32 != 0:
                raise RejectedInput(f"blockDim={blockDim!r} must be a positive multiple of 32",
                                    code="ERR-O01", rule="LANG-4.4")
            block = blockDim
            configs = (CudaWarpConfig("", block // 32),)
        if (not isinstance(clusterDim, int) or clusterDim < 1
                or clusterDim & (clusterDim - 1) != 0):
            raise RejectedInput(f"clusterDim={clusterDim!r} not a power of 2", code="ERR-O02",
                                rule="LANG-4.4")
        if not isinstance(blocks_per_sm, int) or blocks_per_sm < 1:
            raise RejectedInput(f"blocks_per_sm={blocks_per_sm!r} must be a positive int",
                                code="ERR-O04", rule="LANG-4.4")
        if block > MAX_BLOCK_DIM:  # also bounds every per-thread table the checks build
            raise RejectedInput(f"blockDim={block} exceeds {MAX_BLOCK_DIM}, the most threads a "
                                "CUDA CTA can have; use at most 1024 threads (32 warps)",
                                code="ERR-O01", rule="LANG-4.4")
        if clusterDim > MAX_CLUSTER_DIM:
            raise RejectedInput(f"clusterDim={clusterDim} exceeds {MAX_CLUSTER_DIM}, the largest "
                                "CUDA cluster; use at most 16 CTAs", code="ERR-O02",
                                rule="LANG-4.4")
        object.__setattr__(self, "blockDim", block)
        object.__setattr__(self, "clusterDim", clusterDim)
        object.__setattr__(self, "blocks_per_sm", blocks_per_sm)
        object.__setattr__(self, "warp_config", configs)
        object.__setattr__(self, "unsafe_no_shutdown_cluster_sync",  # truthiness, as upstream
                           bool(unsafe_no_shutdown_cluster_sync))

    def call_text(self) -> str:
        """The constructor call as written, e.g. `CudaDeviceFunction(blockDim=256)`."""
        named = [w.name for w in self.warp_config if w.name]
        parts = [f"warp_config=[{', '.join(named)}]" if named else f"blockDim={self.blockDim}"]
        if self.clusterDim != 1:
            parts.append(f"clusterDim={self.clusterDim}")
        if self.blocks_per_sm != 1:
            parts.append(f"blocks_per_sm={self.blocks_per_sm}")
        if self.unsafe_no_shutdown_cluster_sync:
            parts.append("unsafe_no_shutdown_cluster_sync=True")
        return f"CudaDeviceFunction({', '.join(parts)})"

    @property
    def num_threads(self) -> int:
        """N = C * B threads per cluster."""
        return self.blockDim * self.clusterDim

    def warp_offset(self, name: str) -> tuple[int, int]:
        """(first warp, count) of the named warp variable (COLL-2.10)."""
        offset = 0
        for w in self.warp_config:
            if w.name == name:
                return offset, w.count
            offset += w.count
        raise KeyError(name)


def _check_warp_config(configs: tuple[CudaWarpConfig, ...]) -> None:
    prefix = "CudaDeviceFunction.warp_config: "
    names = [w.name for w in configs]
    if not configs:
        raise RejectedInput(prefix + "empty", code="ERR-O05", rule="LANG-4.12")
    for w in configs:
        if not isinstance(w, CudaWarpConfig):
            raise RejectedInput(prefix + f"expected CudaWarpConfig, not {w!r}", code="ERR-O05",
                                rule="LANG-4.12")
        if not _IDENT.match(w.name):
            raise RejectedInput(prefix + f"warp name {w.name!r} is not a valid C identifier", code="ERR-O05",
                                rule="LANG-4.12")
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise RejectedInput(prefix + f"duplicate warp name {dups[0]!r} in {names}",
                            code="ERR-O05", rule="LANG-4.12")
    if any(w.setmaxnreg is not None for w in configs):
        total = 32 * sum(w.count for w in configs)
        if total % 128 != 0:
            raise RejectedInput(prefix + "setmaxnreg requires blockDim to be a multiple of 128, not "
                                f"blockDim={total}",
                                code="ERR-O05", rule="LANG-4.12")
        per_warp: list[tuple[int | None, str]] = []
        for w in configs:
            kind = "dec" if w.setmaxnreg_dec is not None else "inc" if w.setmaxnreg_inc else ""
            per_warp.extend([(w.setmaxnreg, kind)] * w.count)
            reg = w.setmaxnreg
            if reg is not None and (reg % 8 != 0 or not 24 <= reg <= 256):
                raise RejectedInput(prefix + f"setmaxnreg must be a multiple of 8 in [24, 256], "
                                    f"not {reg}", code="ERR-O05", rule="LANG-4.12")
        for g in range(0, len(per_warp), 4):
            if len({v for v, _ in per_warp[g:g + 4]}) > 1:
                raise RejectedInput(prefix + "setmaxnreg must be uniform within each warpgroup "
                                    "(128 threads)",
                                    code="ERR-O05", rule="LANG-4.12")
        kinds: dict[int, set[str]] = {}
        for value, kind in per_warp:
            if value is not None:
                kinds.setdefault(value, set()).add(kind)
        both = sorted(v for v, k in kinds.items() if len(k) > 1)
        if both:
            raise RejectedInput(prefix + f"{both[0]} used both for setmaxnreg.inc and "
                                "setmaxnreg.dec", code="ERR-O05", rule="LANG-4.12")


@dataclass(frozen=True, slots=True)
class CudaWarps:
    """`with CudaWarps(lo, hi, name=...)` (LANG-4.13)."""

    lo: int | None = None
    hi: int | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if self.name is None and (self.lo is None or self.hi is None):
            raise RejectedInput("CudaWarps without name requires both lo and hi",
                                code="ERR-O07", rule="LANG-4.13")
        for v in (self.lo, self.hi):
            if v is not None and (not isinstance(v, int) or isinstance(v, bool)):
                raise RejectedInput(f"CudaWarps bounds must be ints, not {v!r}",
                                    code="ERR-O07", rule="LANG-4.13")
        if self.lo is not None and self.hi is not None and not 0 <= self.lo < self.hi:
            raise RejectedInput(f"CudaWarps requires 0 <= lo < hi, got lo={self.lo}, "
                                f"hi={self.hi}", code="ERR-O07", rule="LANG-4.13")

    def __str__(self) -> str:
        parts = [str(v) for v in (self.lo, self.hi) if v is not None]
        if self.name is not None:
            parts.append(f"name={self.name!r}")
        return f"CudaWarps({', '.join(parts)})"
