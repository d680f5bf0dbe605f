"""Generic CUDA instructions of upstream's `exo.platforms.cuda` beyond the core library:
packed 32-bit register loads and stores (scalar and vector) and warp broadcasts.

Rows of the same `Instr` records as `instrs` (signatures as data; the access semantics are the
parameters' access kinds, SEM-4.2). The legacy typed names are `partial`s of the generic ones,
as upstream's are. LANG-3.6, LANG-6.4
"""

from __future__ import annotations

from typing import Any

from verifier.lang.stdlib import units
from verifier.lang.stdlib.instrs import Instr, InstrParam
from verifier.lang.stdlib.scalars import ScalarInfo
from verifier.lang.stdlib.timelines import InstrTL

_IN_ORDER = InstrTL.cuda_in_order_instr


def _bits(kw: dict[str, Any], name: str) -> int | None:
    try:
        return ScalarInfo(kw[name]).bits if name in kw else None
    except ValueError:
        return None


def _packed32_check(kw: dict[str, Any]) -> str | None:
    if kw.get("dst") != kw.get("src"):
        return f"dst and src must have the same type, not {kw.get('dst')} and {kw.get('src')}"
    bits = _bits(kw, "dst")
    if bits is None or kw["pack"] * bits != 32:
        return f"Copy of pack={kw['pack']} {kw.get('dst')} is not 32-bit"
    return None


def _packed32(store: bool) -> Instr:
    rmem = InstrParam("src" if store else "dst", "tensor", "r" if store else "w",
                      "CudaRmemPacked32", lambda kw: (kw["pack"],))
    other = InstrParam("dst" if store else "src", "tensor", "w" if store else "r",
                       "CudaBasicDeviceVisible", lambda kw: (kw["pack"],))
    name = "cuda_packed32_store" if store else "cuda_packed32_load"
    params = (other, rmem) if store else (rmem, other)
    return Instr(name, params, _IN_ORDER, units.standalone_thread, ("pack",), _packed32_check,
                 precisions=("dst", "src"))


def _vector_check(type_bits: int) -> Any:
    def check(kw: dict[str, Any]) -> str | None:
        if kw.get("mem") not in ("shared", "global"):
            return f"mem={kw.get('mem')!r} must be 'global' or 'shared'"
        if not (kw["v"] in (2, 4) or (kw["v"] == 8 and kw["mem"] == "global")):
            return f"Invalid vector size v={kw['v']}"
        if kw.get("dst") != kw.get("src") or _bits(kw, "dst") != type_bits:
            return f"Expect {type_bits}-bit type, not {kw.get('dst')}"
        return None
    return check


def _vector(type_bits: int, store: bool) -> Instr:
    """`ld/st.{shared|global}.v{v}`: v 32-bit registers of `32 // type_bits` values each."""
    per = 32 // type_bits
    rmem = InstrParam("src" if store else "dst", "tensor", "r" if store else "w",
                      "CudaRmemPacked32", lambda kw: (kw["v"], per))
    # upstream narrows the memory to CudaSmemAtomicity16B / CudaGmemAtomicity16B by `mem`
    other = InstrParam("dst" if store else "src", "tensor", "w" if store else "r",
                       "CudaDeviceVisibleAtomicity16B", lambda kw: (kw["v"] * per,))
    name = f"cuda_packed32_{'storev' if store else 'loadv'}_{type_bits}b"
    params = (other, rmem) if store else (rmem, other)
    return Instr(name, params, _IN_ORDER, units.standalone_thread, ("v",),
                 _vector_check(type_bits), precisions=("dst", "src"), extras=("mem",))


def _broadcast_check(kw: dict[str, Any]) -> str | None:
    n = kw["size0"] * kw.get("size1", 1)
    return None if n == 32 else f"Cannot shuffle in {n} threads (only a whole warp, 32)"


def _broadcast(rank: int) -> Instr:
    """`__shfl_sync` from one lane to the warp: the window dims are distributed over the
    threads (COLL-5.12), each thread writes its own `outputs` and reads its own `inputs`."""
    dims = ("size0", "size1")[:rank]
    name = f"cuda_warp_broadcast_sync_{rank}f32"
    shape = (lambda kw: tuple(kw[d] for d in dims))
    dist = (units.cuda_thread,) if rank == 1 else ()
    params = (InstrParam("outputs", "tensor", "w", "CudaRmem", shape, distributed=dist,
                         owner_only=True),
              InstrParam("inputs", "tensor", "r", "CudaRmem", shape, distributed=dist,
                         owner_only=True)) + tuple(InstrParam(f"i{k}", "index")
                                                   for k in range(rank))
    return Instr(name, params, _IN_ORDER, 32 * units.cuda_thread, dims, _broadcast_check,
                 unmodelled=None if rank == 1 else
                 f"{name} (a 2-D distributed register window)")


cuda_packed32_load = _packed32(store=False)
cuda_packed32_store = _packed32(store=True)
cuda_packed32_loadv_16b = _vector(16, store=False)
cuda_packed32_loadv_32b = _vector(32, store=False)
cuda_packed32_storev_16b = _vector(16, store=True)
cuda_packed32_storev_32b = _vector(32, store=True)
cuda_warp_broadcast_sync_1f32 = _broadcast(1)
cuda_warp_broadcast_sync_2f32 = _broadcast(2)

cuda_packed_load_f32 = cuda_packed32_load.partial(pack=1, dst="f32", src="f32")
cuda_packed_store_f32 = cuda_packed32_store.partial(pack=1, dst="f32", src="f32")
cuda_packed_load_i32 = cuda_packed32_load.partial(pack=1, dst="i32", src="i32")
cuda_packed_store_i32 = cuda_packed32_store.partial(pack=1, dst="i32", src="i32")
cuda_packed_load_f16 = cuda_packed32_load.partial(pack=2, dst="f16", src="f16")
cuda_packed_store_f16 = cuda_packed32_store.partial(pack=2, dst="f16", src="f16")
cuda_packed_load_bf16 = cuda_packed32_load.partial(pack=2, dst="bf16", src="bf16")
cuda_packed_store_bf16 = cuda_packed32_store.partial(pack=2, dst="bf16", src="bf16")
cuda_packed_store_global_f16 = cuda_packed32_storev_16b.partial(dst="f16", src="f16",
                                                                mem="global")

_VECTORS = {(16, False): cuda_packed32_loadv_16b, (32, False): cuda_packed32_loadv_32b,
            (16, True): cuda_packed32_storev_16b, (32, True): cuda_packed32_storev_32b}


def _vector_for(typ: Any, mem: str, store: bool) -> tuple[Instr, int]:
    info = ScalarInfo(typ)
    if info.bits not in (16, 32):
        raise ValueError(f"only 16-bit and 32-bit types are packed, not {info}")
    base = _VECTORS[(info.bits, store)]
    return base.partial(dst=info.name, src=info.name, mem=mem), 32 // info.bits


def get_cuda_packed32_load_v(typ: Any, mem: str) -> tuple[Instr, int]:
    """The vector load for `typ` from `mem` ("shared"/"global") and how many values one
    32-bit register holds (upstream's helper)."""
    return _vector_for(typ, mem, store=False)


def get_cuda_packed32_store_v(typ: Any, mem: str) -> tuple[Instr, int]:
    """The vector store for `typ` to `mem` and the values per 32-bit register."""
    return _vector_for(typ, mem, store=True)


CUDA_INSTRS: dict[str, Instr] = {
    name: value for name, value in dict(globals()).items()
    if isinstance(value, Instr) and not name.startswith("_")}
