"""Memories and barrier mechanisms (language.md §7.4-7.5) as immutable descriptors.

`family` selects the qual-tl row of SEM-3.3 (the table itself is in semantics.rules);
`perms` are the permission letters "CPU / CUDA" of LANG-4.2.
"""

from __future__ import annotations

from dataclasses import dataclass

from verifier.diagnostics import RejectedInput, SharedLimitation, SrcLoc
from verifier.lang.stdlib import units


class MemoryName(str):
    """A memory's name; also callable, as upstream's `mem.name()`, giving the memory as
    printed (`CudaTkWarpTile(64, 256, row)`)."""

    def __new__(cls, name: str, printed: str) -> "MemoryName":
        out = super().__new__(cls, name)
        out.printed = printed
        return out

    def __call__(self) -> str:
        return self.printed

    def __reduce__(self) -> tuple[object, ...]:
        return (MemoryName, (str(self), self.printed))


@dataclass(frozen=True, slots=True)
class Memory:
    name: str
    # host | gmem | smem | grid_constant | rmem | rmem_matrix | rmem_wgmma_d | rmem_tk
    # | rmem_tk_a | rmem_tk_d | abstract
    family: str
    cpu_perms: str
    cuda_perms: str
    native_unit: units.CollUnit | None
    sync_exempt: bool
    const_shape: bool
    params: tuple[int | str, ...] = ()
    abstract: bool = False
    bases: tuple[str, ...] = ()  # abstract memories this one is a subclass of
    packed_dims: int = 0  # trailing dimensions windows must take whole (LANG-6.4, ERR-A10)

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", MemoryName(str(self.name), str(self)))

    def __call__(self, *params: int) -> "Memory":
        """Parameterised memories such as `Sm80_RmemMatrixD(16, 8)`."""
        return Memory(str(self.name), self.family, self.cpu_perms, self.cuda_perms, self.native_unit,
                      self.sync_exempt, self.const_shape, tuple(params), self.abstract,
                      self.bases, self.packed_dims)

    def __str__(self) -> str:
        """As upstream spells it, e.g. `CudaTkWarpVec(16, 'ortho')`."""
        if self.params:
            return f"{self.name}({', '.join(map(repr, self.params))})"
        return str(self.name)

    @property
    def is_smem(self) -> bool:
        return self.family == "smem"

    @property
    def is_register(self) -> bool:
        return self.family in ("rmem", "rmem_matrix", "rmem_wgmma_d") or self.is_tk

    @property
    def is_tk(self) -> bool:
        """A ThunderKittens register tile or vector (TK-1, the wgmma tiles of TK-5)."""
        return self.family in ("rmem_tk", "rmem_tk_a", "rmem_tk_d")


# Abstract bases as upstream's class hierarchy (cuda_memory.py): a formal memory accepts an
# actual that is it or subclasses it (LANG-4.2).
_DEV = ("CudaBasicDeviceVisible", "CudaDeviceVisibleLinear")
_LINEAR = _DEV + ("CudaDeviceVisibleAtomicity16B",)
DRAM = Memory("DRAM", "host", "rwc", "", None, True, False)
# The storage of an mbarrier variable: RAM-like qual-tls (SEM-3.3), allocated in SMEM.
MBARRIER_STORAGE = Memory("CudaMbarrier (storage)", "mbarrier", "", "rwc", None, False, True)
CudaGmemLinear = Memory("CudaGmemLinear", "gmem", "c", "rw", None, False, False,
                        bases=_DEV + ("CudaDeviceVisibleAtomicity16B", "CudaGmemAtomicity16B"))
CudaGridConstant = Memory("CudaGridConstant", "grid_constant", "rwc", "r", None, True, True,
                          bases=_LINEAR + ("DRAM",))
CudaSmemLinear = Memory("CudaSmemLinear", "smem", "", "rwc", units.cuda_cta_in_cluster, False,
                        True, bases=_DEV + ("CudaBasicSmem", "CudaDeviceVisibleAtomicity16B",
                                            "CudaSmemAtomicity16B"))
Sm90_SmemSwizzled = Memory("Sm90_SmemSwizzled", "smem", "", "rwc", units.cuda_cta_in_cluster,
                           False, True, bases=("CudaBasicDeviceVisible", "CudaBasicSmem",
                                               "CudaDeviceVisibleAtomicity16B",
                                               "CudaSmemAtomicity16B"))  # as upstream's
CudaRmem = Memory("CudaRmem", "rmem", "", "rwc", units.cuda_thread, False, True,
                  bases=_LINEAR)
_BDV = ("CudaBasicDeviceVisible",)
CudaRmemPacked32 = Memory("CudaRmemPacked32", "rmem", "", "rwc", units.cuda_thread, False, True,
                          packed_dims=1, bases=_BDV)
Sm80_RmemMatrixA = Memory("Sm80_RmemMatrixA", "rmem_matrix", "", "rwc", units.cuda_warp, False,
                          True, packed_dims=2, bases=_BDV)
Sm80_RmemMatrixB = Memory("Sm80_RmemMatrixB", "rmem_matrix", "", "rwc", units.cuda_warp, False,
                          True, packed_dims=2, bases=_BDV)
Sm80_RmemMatrixD = Memory("Sm80_RmemMatrixD", "rmem_matrix", "", "rwc", units.cuda_warp, False,
                          True, packed_dims=2, bases=_BDV)
Sm90_RmemMatrixD = Memory("Sm90_RmemMatrixD", "rmem_wgmma_d", "", "rwc", units.cuda_warpgroup,
                          False, True, packed_dims=2, bases=_BDV)
Sm90_RmemMatrixA = Memory("Sm90_RmemMatrixA", "abstract", "", "", None, False, True,
                          abstract=True)


def _abstract(name: str) -> Memory:
    return Memory(name, "abstract", "", "", None, False, False, abstract=True)


CudaBasicDeviceVisible = _abstract("CudaBasicDeviceVisible")
CudaDeviceVisibleLinear = _abstract("CudaDeviceVisibleLinear")
CudaDeviceVisibleAtomicity16B = _abstract("CudaDeviceVisibleAtomicity16B")
CudaGmemAtomicity16B = _abstract("CudaGmemAtomicity16B")
CudaSmemAtomicity16B = _abstract("CudaSmemAtomicity16B")
CudaBasicSmem = _abstract("CudaBasicSmem")


_ELEMENT_BITS = {"f16": 16, "bf16": 16, "f32": 32, "i32": 32}


def packed_shape(mem: Memory, elem: str) -> tuple[int, ...] | None:
    """The constant extents the last `packed_dims` dimensions of an allocation must have
    (upstream's packed tensor shape, LANG-6.4); None where spork-verify does not check them."""
    if mem.is_tk or mem.name.startswith("Sm80_RmemMatrix"):
        dims = tuple(p for p in mem.params if isinstance(p, int))[:mem.packed_dims]
        if len(dims) != mem.packed_dims:
            return None
        # upstream's Sm80_RmemMatrixB(N, K) packs (K, N): its mma_packed_tensor_shape
        return dims[::-1] if mem.name == "Sm80_RmemMatrixB" else dims
    if mem.name == "CudaRmemPacked32" and elem in _ELEMENT_BITS:
        return (32 // _ELEMENT_BITS[elem],)
    return None


def Sm90_get_mma_smem(swizzle: int) -> Memory:
    return CudaSmemLinear if swizzle == 0 else Sm90_SmemSwizzled(swizzle)


@dataclass(frozen=True, slots=True)
class BarrierMechanism:
    """A barrier mechanism (language.md §7.5)."""

    name: str
    supports_guards: bool
    multicast: bool
    storage_tracked: bool
    lowerable: bool = True

    def __str__(self) -> str:
        return self.name


CudaMbarrier = BarrierMechanism("CudaMbarrier", True, True, True)
CudaCommitGroup = BarrierMechanism("CudaCommitGroup", False, False, False)
CudaClusterSync = BarrierMechanism("CudaClusterSync", True, False, False)
CudaEvent = BarrierMechanism("CudaEvent", True, False, False, lowerable=False)


@dataclass(frozen=True, slots=True)
class SpecialWindow:
    """A special window `w = x[...] @ Sm90_tensorMap(swizzle, *box)` (LANG-3.4, LANG-6.6).

    Only its static rules are checked (ERR-P24, ERR-A03, ERR-A08); spork-verify does not verify
    programs that build one (ERR-V11, specs/verification.md "Tensor maps").
    """

    name: str
    source_memory: str
    swizzle: int
    box: tuple[int, ...]

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, (self.swizzle,) + self.box))})"


def Sm90_tensorMap(swizzle: int, *box: int) -> SpecialWindow:
    """TMA descriptor window; swizzle in {0, 32, 64, 128}, box rank 1..5 (ERR-P07). LANG-3.4"""
    args = ", ".join(map(repr, (swizzle,) + box))
    if swizzle not in (0, 32, 64, 128):
        raise RejectedInput(f"Failed to instantiate Sm90_tensorMap({args}): swizzle must be 0, "
                            "32, 64 or 128", code="ERR-P07", rule="LANG-3.4")
    if not 1 <= len(box) <= 5 or not all(isinstance(b, int) and b >= 1 for b in box):
        raise RejectedInput(f"Failed to instantiate Sm90_tensorMap({args}): the box needs 1 to "
                            "5 positive int extents", code="ERR-P07", rule="LANG-3.4")
    return SpecialWindow("Sm90_tensorMap", "CudaGmemLinear", swizzle, tuple(box))


def smem_below_cluster(name: str, mem: "Memory", loc: SrcLoc) -> SharedLimitation:
    """SMEM allocated inside a thread loop of a cluster launch (one copy per CTA): outside the
    fragment, as for upstream's sync_check, which requires SMEM at cluster scope (LANG-6.3)."""
    return SharedLimitation(f"not supported by spork-verify: SMEM allocation {name} @ {mem} "
                            "below cluster scope with clusterDim > 1 (allocate SMEM at cluster "
                            "scope, outside the cuda_threads loops)", loc, code="ERR-V11",
                            rule="LANG-6.3", variable=name)
