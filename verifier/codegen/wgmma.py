"""wgmma (language.md §7.6, SEM-8.2): warpgroup matrix multiply-accumulate on Hopper.

Reads the calls of `Sm90_zero_scale_d_f32`, `Sm90_mma_async_tf32` and
`Sm90_mma_store_d_{row,col}_major_tf32` with the views of their operands; produces C/PTX lines
and the helpers they call. An `Sm90_RmemMatrixD(M, N)` accumulator is an
`exo_Sm90_AccumD<M, N>`: the M/64 · N/2 f32 registers per thread of the PTX ISA's m64nNk8
D-fragments (row 16·warp + lane/4 + 8·((i/2) mod 2), column 8·(i/4) + 2·(lane mod 4) + i mod 2
for register i) and the scale-d flag that the zeroing instruction clears. A and B are K-major
tiles in 128-byte-swizzled SMEM (rows of 32 f32), addressed by matrix descriptors: start
address, leading byte offset 16 (unused for swizzled K-major operands), stride byte offset 1024
(8 rows of 128 bytes), layout type 1 (128-byte swizzle). Each m64 block of A is one
`wgmma.mma_async.sync.aligned.m64n<N>k8.f32.tf32.tf32`.
Non-goals: register-sourced A (`Sm90_RmemMatrixA` is a stub), f16/bf16 (no stdlib instruction).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from verifier.codegen.exprs import View
from verifier.diagnostics import InternalError, RejectedInput, SrcLoc
from verifier.lang.ir import ir

SWIZZLE = 128  # bytes per SMEM row of A and B (Sm90_SmemSwizzled(128), 32 f32)
ROW = 32  # f32 elements per row

ACCUM = r"""#ifndef EXO_SM90_ACCUM
#define EXO_SM90_ACCUM
// An Sm90_RmemMatrixD(M, N) accumulator (per thread of its warpgroup): the m64nNk8 f32
// D-fragments of the M / 64 row blocks, and the scale-d flag of the next wgmma.
template <int M, int N>
struct exo_Sm90_AccumD
{
    float r[M / 64 * N / 2];
    int scale_d;
};

// K-major operand in 128-byte-swizzled SMEM: start address, leading byte offset 16 (unused),
// stride byte offset 1024 (8 rows of 128 bytes), layout type 1 (128-byte swizzle).
static __device__ __forceinline__ uint64_t exo_Sm90_smemDesc128(const void* smem)
{
    const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    return static_cast<uint64_t>((addr & 0x3FFFFu) >> 4) | (static_cast<uint64_t>(16 >> 4) << 16)
        | (static_cast<uint64_t>(1024 >> 4) << 32) | (static_cast<uint64_t>(1) << 62);
}

// After wgmma.wait_group: the accumulator registers are read only from here on (the compiler
// must not move their uses above the wait; PTX leaves earlier reads undefined).
template <int M, int N>
static __device__ __forceinline__ void exo_Sm90_fenceAccum(exo_Sm90_AccumD<M, N>* d, int count)
{
    for (int k = 0; k < count; k++) {
#pragma unroll
        for (int i = 0; i < M / 64 * N / 2; i++) {
            asm volatile("" : "+f"(d[k].r[i]) :: "memory");
        }
    }
}

// M_end, N_end: rows and columns of the tile that exist (bounds-predicated stores).
template <int M, int N, bool ColMajor>
static __device__ __forceinline__ void exo_Sm90_storeD(
    float* dst, int64_t rs, int64_t cs, const exo_Sm90_AccumD<M, N>* d, int64_t M_end,
    int64_t N_end)
{
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32;
#pragma unroll
    for (int mb = 0; mb < M / 64; mb++) {
#pragma unroll
        for (int i = 0; i < N / 2; i++) {
            const int m = 64 * mb + 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
            const int n = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
            if (m < M_end && n < N_end) {
                dst[ColMajor ? n * rs + m * cs : m * rs + n * cs] = d->r[mb * (N / 2) + i];
            }
        }
    }
}
#endif
"""


def accum_type(mem_params: tuple[int, ...], shard: tuple[int, ...], name: str,
               loc: SrcLoc | None) -> str:
    """`exo_Sm90_AccumD<M, N>` for an `Sm90_RmemMatrixD(M, N)` allocation whose last two shard
    dimensions are [M, N]. Rules: LANG-6.4"""
    if len(mem_params) != 2 or len(shard) < 2 or tuple(shard[-2:]) != tuple(mem_params):
        raise RejectedInput(f"{name}: Sm90_RmemMatrixD{mem_params} needs trailing dimensions "
                            f"{list(mem_params)}, not {list(shard)}", loc, code="ERR-L06",
                            rule="LANG-6.4")
    m, n = mem_params
    if m % 64 or not 8 <= n <= 256 or n % 8:
        raise RejectedInput(f"{name}: Sm90_RmemMatrixD({m}, {n}): M must be a multiple of 64 "
                            "and N a multiple of 8 in [8, 256]", loc, code="ERR-L06",
                            rule="LANG-6.4")
    return f"exo_Sm90_AccumD<{m}, {n}>"


def fence_accumulators(views: list[View]) -> list[str]:
    """After a wgmma `wait_group`: pin every accumulator in scope (its uses stay below the
    wait). Rules: SEM-8.4"""
    return [f"exo_Sm90_fenceAccum({v.base}, {v.elems});" for v in views]


def mma_helper(n: int) -> str:
    """`exo_Sm90_wgmmaTf32_n<N>`: one m64n<N>k8 wgmma on N/2 accumulator registers; scale-d
    comes from a predicate (0: D is not read). Rules: LANG-8.7"""
    regs = n // 2
    dvec = ", ".join(f"%{k}" for k in range(regs))
    outs = ", ".join(f'"+f"(d[{k}])' for k in range(regs))
    name = f"exo_Sm90_wgmmaTf32_n{n}"
    guard = f"EXO_SM90_WGMMA_TF32_N{n}"
    return "\n".join([
        f"#ifndef {guard}", f"#define {guard}",
        f"static __device__ __forceinline__ void {name}(",
        "    float* d, uint64_t a, uint64_t b, int scale_d)", "{",
        '    asm volatile("{\\n\\t.reg .pred exo_p;\\n\\t"',
        f'                 "setp.ne.b32 exo_p, %{regs + 2}, 0;\\n\\t"',
        f'                 "wgmma.mma_async.sync.aligned.m64n{n}k8.f32.tf32.tf32 "',
        f'                 "{{{dvec}}}, %{regs}, %{regs + 1}, exo_p, 1, 1;\\n\\t}}"',
        f"                 : {outs}",
        '                 : "l"(a), "l"(b), "r"(scale_d));', "}", "#endif", ""])


def _kw(s: ir.Call) -> dict[str, int]:
    return {k: v for k, v in s.kwargs if isinstance(v, int)}


def _operand(view: View, name: str, rows: int, what: str, loc: SrcLoc) -> str:
    """The address of an A or B tile: [rows, 8] in 128-byte-swizzled rows. Rules: LANG-8.7"""
    if view.swizzle != SWIZZLE or view.strides != (str(ROW), "1"):
        raise RejectedInput(f"{what}: operand {name} must be a [{rows}, 8] window of "
                            f"Sm90_SmemSwizzled({SWIZZLE}) with strides ({ROW}, 1), not "
                            f"swizzle {view.swizzle}, strides {list(view.strides)}", loc,
                            code="ERR-L06", rule="LANG-8.7")
    return view.address()


def _zero(s: ir.Call, tensors: Mapping[str, View], sizes: Mapping[str, str]) -> list[str]:
    return [f"{tensors['d'].base}->scale_d = 0;"]


def _mma(s: ir.Call, tensors: Mapping[str, View], sizes: Mapping[str, str]) -> list[str]:
    """Per m64 block of A: one wgmma; then scale-d = 1 (D is read from now on)."""
    kw = _kw(s)
    m, n = kw["M"], kw["N"]
    what = str(s.callee)
    a = _operand(tensors["a"], "a", m, what, s.loc)
    b = _operand(tensors["b"], "b", n, what, s.loc)
    d = tensors["d"].base
    out = ["{", f"    const uint64_t exo_bDesc = exo_Sm90_smemDesc128({b});"]
    for mb in range(m // 64):
        a_block = a if mb == 0 else f"{a} + {64 * ROW * mb}"
        out.append(f"    exo_Sm90_wgmmaTf32_n{n}({d}->r + {mb * n // 2}, "
                   f"exo_Sm90_smemDesc128({a_block}), exo_bDesc, {d}->scale_d);")
    return out + [f"    {d}->scale_d = 1;", "}"]


def _store(col_major: bool) -> Callable[[ir.Call, Mapping[str, View], Mapping[str, str]],
                                        list[str]]:
    def lower(s: ir.Call, tensors: Mapping[str, View], sizes: Mapping[str, str]) -> list[str]:
        kw = _kw(s)
        dst = tensors["dst"]
        if dst.scalar or len(dst.strides) != 2 or dst.swizzle:
            raise InternalError(f"{s.callee}: dst is not a linear 2-D window", s.loc)
        rs, cs = dst.strides
        flag = "true" if col_major else "false"
        return [f"exo_Sm90_storeD<{kw['M']}, {kw['N']}, {flag}>({dst.base}, {rs}, {cs}, "
                f"{tensors['src'].base}, {sizes['M_end']}, {sizes['N_end']});"]
    return lower


WgmmaLowering = Callable[[ir.Call, Mapping[str, View], Mapping[str, str]], list[str]]

WGMMA_ROWS: Mapping[str, WgmmaLowering] = MappingProxyType({
    "Sm90_zero_scale_d_f32": _zero,
    "Sm90_mma_async_tf32": _mma,
    "Sm90_mma_store_d_row_major_tf32": _store(False),
    "Sm90_mma_store_d_col_major_tf32": _store(True),
})


def helpers(shapes: list[tuple[str, dict[str, int]]]) -> str:
    """The accumulator type, descriptor and store helpers, and one wgmma helper per N used
    (`shapes`: (instr name, template keywords) of every call)."""
    if not any(name in WGMMA_ROWS for name, _ in shapes):
        return ""
    ns = sorted({kw["N"] for name, kw in shapes if name == "Sm90_mma_async_tf32"})
    return ACCUM + "".join(mma_helper(n) for n in ns)
