"""The closed instruction library (language.md §7.6, Decision 7): signatures as data.

Each `Instr` states its parameters (kind, access kind per SEM-4.2, formal memory, rank), its
instr-tl and the collective unit it must be called at. Lowering text lives in codegen; access
semantics in semantics. Calling an instr with bad template keywords is ERR-P07. Template keywords
are ints (`K=8`), precisions (`dst=f16`: a type name or a `scalars` value) or free-form extras;
`partial(**kw)` fixes some of them, as upstream's `InstrTemplate.partial` does. User-defined
instrs (`@instr` classes, `user_instrs`) are turned into the same `Instr` records.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable

from verifier.diagnostics import RejectedInput
from verifier.lang.stdlib import units
from verifier.lang.ir.ir import SCALAR_TYPES, Interval, Window
from verifier.lang.stdlib.timelines import InstrTL, QualTL


@dataclass(frozen=True, slots=True)
class InstrParam:
    name: str
    kind: str  # "size" | "index" | "tensor" | "scalar" (one element, passed as `x` or `x[i]`)
    access: str = "r"  # r | w | rw | a  (SEM-4.2; "a" = atomic mutate)
    formal_mem: str = ""  # formal memory (class name; actual must be it or a subclass)
    shape: Callable[[dict[str, Any]], tuple[int | str, ...]] | None = None  # window extents
    atomic_quals: frozenset[QualTL] = frozenset()
    # COLL-5.12: the first len(distributed) intervals of the window are distributed over these
    # units, as if the access sat in `for y in cuda_threads(0, c, unit=U)` loops; with
    # owner_only each slice is accessed by its owner thread(s) only (SEM-4.3), else by the
    # whole calling collective.
    distributed: tuple[units.CollUnit, ...] = ()
    owner_only: bool = False
    out_of_order: bool | None = None  # as the instr declares it; None: as SEM-3.3 derives it
    # SEM-4.3 clipping: "tensor_map" (hardware clips to the tensor), "store_d_row"/"store_d_col"
    # (only relative rows < M_end and columns < N_end are touched); "" for none
    clip: str = ""
    # the actual must be a window taken through a tensor map with this (swizzle, box)
    tensor_map: Callable[[dict[str, Any]], tuple[int, tuple[int, ...]]] | None = None
    formal_params: Callable[[dict[str, Any]], tuple[int, ...]] | None = None  # e.g. swizzle
    # required element stride of the window's row dimension (wgmma), or the template keyword
    # that gives it (a dense SMEM tile of ThunderKittens)
    row_stride: int | str = 0
    # BW-5.2: the window's first interval is the CTA pair (cta_group::2): one issuing thread of
    # the pair's leader CTA accesses both CTAs' slices itself (not distributed over its collective)
    cta_pair: bool = False


@dataclass(frozen=True)
class DistributedDim:
    """A window dimension a callee distributes (COLL-5.12): its position in the index list,
    the interval, and the unit of the synthetic `cuda_threads` loop over it."""

    pos: int
    interval: Interval
    unit: units.CollUnit


def callee_distributed(param: InstrParam, w: Window) -> tuple[DistributedDim, ...]:
    """The first len(param.distributed) intervals of `w` with their units (COLL-5.12)."""
    if not param.distributed:
        return ()
    out: list[DistributedDim] = []
    for pos, a in enumerate(w.idx):
        if isinstance(a, Interval) and len(out) < len(param.distributed):
            out.append(DistributedDim(pos, a, param.distributed[len(out)]))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class TmaInfo:
    """A TMA load's transaction bytes (SEM-8.6): the issuing CTA's elected lane expects
    `ncta * box_bytes` on its own mbarrier; each of the `ncta` issuers completes `box_bytes`
    (at the tensor's element size) on every destination CTA's mbarrier."""

    ncta: Callable[[dict[str, Any]], int]
    box_elements: Callable[[dict[str, Any]], int]
    # what the instr's expect-tx counts per element: bits, or the precision keyword whose type
    # gives them (endgame's TMA counts the tensor's own element size)
    element_bits: int | str
    source: str  # the tensor-map parameter whose element type the hardware copies


@dataclass(frozen=True, slots=True)
class FixedShape:
    """The window extents of a parameter once an instr is instantiated: ints, or the name (or
    text) of a runtime size parameter. Data, so that user instrs pickle (LOAD-9)."""

    dims: tuple[int | str, ...]

    def __call__(self, _kw: dict[str, Any]) -> tuple[int | str, ...]:
        return self.dims


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
    unit_of: Callable[[dict[str, Any]], units.CollUnit] | None = None  # unit set by keywords
    precisions: tuple[str, ...] = ()  # precision keywords: a type (`dst=f16`), LANG-3.6
    extras: tuple[str, ...] = ()  # free-form keywords (`mem="global"`, `smem_box=(8, 32)`)
    bound: tuple[tuple[str, Any], ...] = ()  # keywords fixed by `partial` (or a user instance)
    unmodelled: str | None = None  # why calls are outside the encoding (ERR-V11), if they are
    base: "Instr | None" = field(default=None, compare=False, repr=False)  # before `partial`
    tma: TmaInfo | None = None  # a TMA load completing on its trailing mbarrier
    # the error code and rule of a bad template keyword value (check_template)
    template_code: tuple[str, str] = ("ERR-P07", "LANG-3.6")

    def unit_at(self, kwargs: dict[str, Any]) -> units.CollUnit:
        """The collective unit of a call with these template keywords (COLL-3.1)."""
        return self.unit if self.unit_of is None else self.unit_of({**dict(self.bound),
                                                                     **kwargs})

    def __str__(self) -> str:
        return self.name

    def partial(self, **kwargs: Any) -> "Instr":
        """This instr with some template keywords fixed (upstream's `partial`)."""
        return replace(self, bound=tuple(sorted({**dict(self.bound), **kwargs}.items())),
                       base=self.root())

    def root(self) -> "Instr":
        """The instr `partial` started from: the one a call's IR names (a stdlib instr is sent
        to the parent by name, LOAD-9); the call's keywords carry what `partial` fixed."""
        return self.base or self

    def __call__(self, **kwargs: Any) -> "Instr":
        """`instr(dst="f32", K=8)` in Python: the instr with those keywords fixed."""
        return self.partial(**kwargs)

    def instantiate(self, kwargs: dict[str, object]) -> dict[str, Any]:
        """Validate template keywords (ERR-P07); ints stay ints, precisions become type names.
        Keywords fixed by `partial` count as given."""
        given = {**dict(self.bound), **kwargs}
        known = self.template + self.precisions + self.extras
        bad = [k for k in given if k not in known]
        missing = [k for k in self.template + self.precisions if k not in given]
        if bad or missing:
            raise RejectedInput(f"Failed to instantiate {self.name}({given}): expected "
                                f"keywords {list(known)}", code="ERR-P07", rule="LANG-3.6")
        values: dict[str, Any] = {}
        for k, v in given.items():
            if k in self.precisions:
                values[k] = precision_name(v, f"{self.name}: {k}")
            elif k in self.template and (not isinstance(v, int) or isinstance(v, bool)):
                raise RejectedInput(f"Failed to instantiate {self.name}: {k}={v!r} is not an int",
                                    code="ERR-P07", rule="LANG-3.6")
            else:
                values[k] = v
        if self.check_template is not None:
            problem = self.check_template(values)
            if problem:
                code, rule = self.template_code
                raise RejectedInput(f"Failed to instantiate {self.name}({values}): {problem}",
                                    code=code, rule=rule)
        return values


def precision_name(value: object, what: str) -> str:
    """A precision keyword's type name: `"f16"` or a `scalars` value such as `f16`."""
    name = value if isinstance(value, str) else getattr(value, "name", None)
    if not isinstance(name, str) or name not in SCALAR_TYPES or name == "R":
        raise RejectedInput(f"Failed to instantiate {what}={value!r}: expected a type such as "
                            "f32, f16 or bf16", code="ERR-P07", rule="LANG-3.6")
    return name


def _host_copies() -> dict[str, Instr]:
    out: dict[str, Instr] = {}
    dims = "mnopq"
    stream = InstrTL.cpu_cuda_stream_instr
    # upstream's names: `_{rank}d` (the element type given as precision keywords `dst=`,
    # `src=`) and the `_{rank}{type}` aliases with those keywords fixed
    for rank in range(1, 6):
        sizes = tuple(InstrParam(dims[i], "size") for i in range(rank))
        shape = FixedShape(tuple(dims[:rank]))
        for ty in ("d", "f32", "f16", "bf16", "i32"):
            for direction, dst_mem, src_mem in (("htod", "CudaGmemLinear", "DRAM"),
                                                ("dtoh", "DRAM", "CudaGmemLinear")):
                name = f"cudaMemcpyAsync_{direction}_{rank}{ty}"
                out[name] = Instr(name, sizes + (
                    InstrParam("dst", "tensor", "w", dst_mem, shape),
                    InstrParam("src", "tensor", "r", src_mem, shape)), stream,
                    units.standalone_thread, precisions=("dst", "src"),
                    bound=() if ty == "d" else (("dst", ty), ("src", ty)))
            name = f"cudaMemsetAsync0_{rank}{ty}"
            out[name] = Instr(name, sizes + (
                InstrParam("dst", "tensor", "w", "CudaGmemLinear", shape),), stream,
                units.standalone_thread, precisions=("dst",),
                bound=() if ty == "d" else (("dst", ty),))
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


def lane_mask_check(kw: dict[str, int]) -> str | None:
    return None if kw["laneMask"] in (1, 2, 4, 8, 16) else \
        "laneMask must be one bit: 1, 2, 4, 8 or 16"


def _warp_shuffles() -> dict[str, Instr]:
    """`__shfl_xor_sync` between the two threads `laneMask` lanes apart (upstream's
    cuda_warp_intrin). The window's one dimension is distributed over the pair (COLL-5.12,
    unit cuda_thread): each thread writes its own `outputs` element and reads its own `inputs`
    element; the exchange between the two registers is the instruction itself."""
    out: dict[str, Instr] = {}
    pair = (units.cuda_thread,)
    for name in ("cuda_shfl_xor_sync_1f32", "cuda_shfl_xor_sync_1f32_sum"):
        out[name] = Instr(
            name,
            (InstrParam("outputs", "tensor", "w", "CudaRmem", FixedShape((2,)),
                        distributed=pair, owner_only=True),
             InstrParam("inputs", "tensor", "r", "CudaRmem", FixedShape((2,)),
                        distributed=pair, owner_only=True)),
            InstrTL.cuda_in_order_instr, 2 * units.cuda_threads_strided(1, 1), ("laneMask",),
            lane_mask_check,
            unit_of=lambda kw: 2 * units.cuda_threads_strided(1, kw["laneMask"]))
    return out


INSTRS: dict[str, Instr] = {**_host_copies(), **_sm80(), **_warp_shuffles()}

