"""The closed instruction library (language.md §7.6, Decision 7): signatures as data.

Each `Instr` states its parameters (kind, access kind per SEM-4.2, formal memory, rank), its
instr-tl and the collective unit it must be called at. Lowering text lives in codegen; access
semantics in semantics. Calling an instr with bad template keywords is ERR-P07.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from verifier.diagnostics import RejectedInput
from verifier.lang import units
from verifier.lang.timelines import InstrTL, QualTL


@dataclass(frozen=True, slots=True)
class InstrParam:
    name: str
    kind: str  # "size" | "index" | "tensor"
    access: str = "r"  # r | w | rw | a  (SEM-4.2; "a" = atomic mutate)
    formal_mem: str = ""  # formal memory (class name; actual must be it or a subclass)
    shape: Callable[[dict[str, Any]], tuple[int | str, ...]] | None = None  # window extents
    atomic_quals: frozenset[QualTL] = frozenset()
    # SEM-4.3 clipping: "tensor_map" (hardware clips to the tensor), "store_d_row"/"store_d_col"
    # (only relative rows < M_end and columns < N_end are touched); "" for none
    clip: str = ""
    # the actual must be a window taken through a tensor map with this (swizzle, box)
    tensor_map: Callable[[dict[str, Any]], tuple[int, tuple[int, ...]]] | None = None
    distributed: int = 0  # leading dims spread over CTAs by callee units (COLL-5.12)
    formal_params: Callable[[dict[str, Any]], tuple[int, ...]] | None = None  # e.g. swizzle
    row_stride: int = 0  # required element stride of the window's row dimension (wgmma)


@dataclass(frozen=True, slots=True)
class TmaInfo:
    """A TMA load's transaction bytes (SEM-8.6): the issuing CTA's elected lane expects
    `ncta * box_bytes` on its own mbarrier; each of the `ncta` issuers completes `box_bytes`
    (at the tensor's element size) on every destination CTA's mbarrier."""

    ncta: Callable[[dict[str, Any]], int]
    box_elements: Callable[[dict[str, Any]], int]
    element_bits: int  # what the instr's expect-tx counts per element
    source: str  # the tensor-map parameter whose element type the hardware copies


@dataclass(frozen=True, slots=True)
class Instr:
    name: str
    params: tuple[InstrParam, ...]
    instr_tl: InstrTL
    unit: units.CollUnit
    template: tuple[str, ...] = ()
    check_template: Callable[[dict[str, int]], str | None] | None = None
    trailing_mech: str | None = None  # "CudaMbarrier" when a trailing barrier is required
    barrier_units: int = 0  # intervals its trailing barrier must have (LANG-5.7, COLL-5.12)
    unit_of: Callable[[dict[str, int]], units.CollUnit] | None = None  # unit set by keywords
    optional: tuple[str, ...] = ()  # template keywords that may be left out (tuple values)
    tma: TmaInfo | None = None  # a TMA load completing on its trailing mbarrier

    def unit_at(self, kwargs: dict[str, int]) -> units.CollUnit:
        """The collective unit of a call with these template keywords (COLL-3.1)."""
        return self.unit if self.unit_of is None else self.unit_of(kwargs)

    def __str__(self) -> str:
        return self.name

    def instantiate(self, kwargs: dict[str, object]) -> dict[str, Any]:
        """Validate template keywords (ERR-P07); returns them as ints (optional ones: tuples
        of ints, or left out)."""
        bad = [k for k in kwargs if k not in self.template + self.optional]
        missing = [k for k in self.template if k not in kwargs]
        if bad or missing:
            raise RejectedInput(f"Failed to instantiate {self.name}({kwargs}): expected "
                                f"keywords {list(self.template)}"
                                + (f" (optional: {list(self.optional)})" if self.optional else ""),
                                code="ERR-P07", rule="LANG-3.6")
        values: dict[str, Any] = {}
        for k, v in kwargs.items():
            if k in self.optional:
                if not isinstance(v, (tuple, list)) or not all(
                        isinstance(c, int) and not isinstance(c, bool) for c in v):
                    raise RejectedInput(f"Failed to instantiate {self.name}: {k}={v!r} is not "
                                        "a tuple of ints", code="ERR-P07", rule="LANG-3.6")
                values[k] = tuple(v)
                continue
            if not isinstance(v, int) or isinstance(v, bool):
                raise RejectedInput(f"Failed to instantiate {self.name}: {k}={v!r} is not an int",
                                    code="ERR-P07", rule="LANG-3.6")
            values[k] = v
        if self.check_template is not None:
            problem = self.check_template(values)
            if problem:
                raise RejectedInput(f"Failed to instantiate {self.name}({values}): {problem}",
                                    code="ERR-P07", rule="LANG-3.6")
        return values


def _host_copies() -> dict[str, Instr]:
    out: dict[str, Instr] = {}
    dims = "mnopq"
    stream = InstrTL.cpu_cuda_stream_instr
    # upstream's names: `_{rank}d` (any element type) and the `_{rank}{type}` aliases
    for rank in range(1, 6):
        for ty in ("d", "f32", "f16", "bf16", "i32"):
            sizes = tuple(InstrParam(dims[i], "size") for i in range(rank))

            def shape(_kw: dict[str, int], rank: int = rank) -> tuple[str, ...]:
                return tuple(dims[:rank])

            for direction, dst_mem, src_mem in (("htod", "CudaGmemLinear", "DRAM"),
                                                ("dtoh", "DRAM", "CudaGmemLinear")):
                name = f"cudaMemcpyAsync_{direction}_{rank}{ty}"
                out[name] = Instr(name, sizes + (
                    InstrParam("dst", "tensor", "w", dst_mem, shape),
                    InstrParam("src", "tensor", "r", src_mem, shape)), stream,
                    units.standalone_thread)
            name = f"cudaMemsetAsync0_{rank}{ty}"
            out[name] = Instr(name, sizes + (
                InstrParam("dst", "tensor", "w", "CudaGmemLinear", shape),), stream,
                units.standalone_thread)
    return out


def _cp_async_check(kw: dict[str, int]) -> str | None:
    return None if kw["size"] in (1, 2, 4) else "size must be 1, 2 or 4 (4/8/16 bytes)"


def _mma_k_check(kw: dict[str, int]) -> str | None:
    return None if kw["K"] in (4, 8) else "K must be 4 or 8"


# The formal memory of the Sm80 fragment loads and stores, as upstream declares it: any
# device-visible memory with 16-byte atomicity (linear or swizzled SMEM, GMEM).
_ATOM16 = "CudaDeviceVisibleAtomicity16B"


def _sm80() -> dict[str, Instr]:
    out: dict[str, Instr] = {}
    in_order = InstrTL.cuda_in_order_instr
    out["Sm80_cp_async_f32"] = Instr(
        "Sm80_cp_async_f32",
        (InstrParam("smem", "tensor", "w", "CudaBasicSmem", lambda kw: (kw["size"],)),
         InstrParam("gmem", "tensor", "r", "CudaGmemLinear", lambda kw: (kw["size"],))),
        InstrTL.Sm80_cp_async_instr, units.standalone_thread, ("size",), _cp_async_check)
    for major in ("row", "col"):
        a_src = (lambda kw: (16, kw["K"])) if major == "row" else (lambda kw: (kw["K"], 16))
        b_src = (lambda kw: (kw["K"], 8)) if major == "row" else (lambda kw: (8, kw["K"]))
        out[f"Sm80_mma_load_a_{major}_major_tf32"] = Instr(
            f"Sm80_mma_load_a_{major}_major_tf32",
            (InstrParam("rmem", "tensor", "w", "Sm80_RmemMatrixA", lambda kw: (16, kw["K"])),
             InstrParam("src", "tensor", "r", _ATOM16, a_src)),
            in_order, units.cuda_warp, ("K",), _mma_k_check)
        out[f"Sm80_mma_load_b_{major}_major_tf32"] = Instr(
            f"Sm80_mma_load_b_{major}_major_tf32",
            (InstrParam("rmem", "tensor", "w", "Sm80_RmemMatrixB", lambda kw: (kw["K"], 8)),
             InstrParam("src", "tensor", "r", _ATOM16, b_src)),
            in_order, units.cuda_warp, ("K",), _mma_k_check)
        d_shape = (lambda kw: (16, 8)) if major == "row" else (lambda kw: (8, 16))
        for verb, access in (("store", "w"), ("reduce", "rw"), ("atomic_reduce", "a")):
            name = f"Sm80_mma_{verb}_d_{major}_major_tf32"
            quals = frozenset({QualTL.cuda2}) if access == "a" else frozenset()
            out[name] = Instr(
                name,
                (InstrParam("dst", "tensor", access, _ATOM16, d_shape,
                            quals),
                 InstrParam("rmem", "tensor", "r", "Sm80_RmemMatrixD", lambda kw: (16, 8))),
                in_order, units.cuda_warp)
    out["Sm80_mma_tf32"] = Instr(
        "Sm80_mma_tf32",
        (InstrParam("D", "tensor", "rw", "Sm80_RmemMatrixD", lambda kw: (16, 8)),
         InstrParam("A", "tensor", "r", "Sm80_RmemMatrixA", lambda kw: (16, kw["K"])),
         InstrParam("B", "tensor", "r", "Sm80_RmemMatrixB", lambda kw: (kw["K"], 8))),
        in_order, units.cuda_warp, ("K",), _mma_k_check)
    out["Sm80_mma_zero_d_tf32"] = Instr(
        "Sm80_mma_zero_d_tf32",
        (InstrParam("rmem", "tensor", "w", "Sm80_RmemMatrixD", lambda kw: (16, 8)),),
        in_order, units.cuda_warp)
    return out


def _lane_mask_check(kw: dict[str, int]) -> str | None:
    return None if kw["laneMask"] in (1, 2, 4, 8, 16) else \
        "laneMask must be one bit: 1, 2, 4, 8 or 16"


def _warp_shuffles() -> dict[str, Instr]:
    """`__shfl_xor_sync` between the two threads `laneMask` lanes apart: each reads both
    threads' `inputs` and writes its own `outputs` (upstream's cuda_warp_intrin)."""
    out: dict[str, Instr] = {}
    for name in ("cuda_shfl_xor_sync_1f32", "cuda_shfl_xor_sync_1f32_sum"):
        out[name] = Instr(
            name,
            (InstrParam("outputs", "tensor", "w", "CudaRmem", lambda kw: (2,)),
             InstrParam("inputs", "tensor", "r", "CudaRmem", lambda kw: (2,))),
            InstrTL.cuda_in_order_instr, 2 * units.cuda_threads_strided(1, 1), ("laneMask",),
            _lane_mask_check,
            unit_of=lambda kw: 2 * units.cuda_threads_strided(1, kw["laneMask"]))
    return out


INSTRS: dict[str, Instr] = {**_host_copies(), **_sm80(), **_warp_shuffles()}

# Names of other instructions upstream exports; calling one is ERR-V11 (Decision 7: closed set).
UNSUPPORTED_INSTR_NAMES = (
    "cuda_packed_load_f32", "cuda_packed_store_f32", "cuda_warp_broadcast_sync_1f32",
)
