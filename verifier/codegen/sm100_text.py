"""C/PTX text of the Blackwell (sm_100a) helpers (specs/blackwell.md "Code generation").

Reads which tcgen05 rows a file uses; produces include-guarded `__device__` helpers: the
shared-memory matrix descriptor and the `tcgen05.mma` issue of each kind (BW-CG-3), the
`tcgen05.ld.sync.aligned.32x32b.x<N>` load of each N (BW-CG-5), the row store of a loaded
tile, and the register pin after `tcgen05.wait::ld` (BW-CG-6). The PTX facts are the PTX ISA's
(chapter "TensorCore 5th Generation Family Instructions"): the layouts of the instruction and
shared-memory descriptors, and the lane quarter each warp of a warpgroup may reach.
Non-goals: choosing which helper a call needs (`sm100.py`).
"""

from __future__ import annotations

DESCRIPTOR = r"""#ifndef EXO_SM100_SMEM_DESC
#define EXO_SM100_SMEM_DESC
// BW-CG-3: tcgen05 shared-memory matrix descriptor (PTX ISA "Shared memory descriptor"):
// start address >> 4 in bits 0-13, leading byte offset >> 4 in 16-29 (16: unused by K-major
// swizzled operands), stride byte offset >> 4 in 32-45 (one 8-row group), the fixed value 0b001
// in 46-48, base offset 0, swizzle mode in 61-63.
static __device__ __forceinline__ uint64_t exo_Sm100_smemDesc(
    const void* smem, uint32_t sbo, uint32_t mode)
{
    const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    return static_cast<uint64_t>((addr & 0x3FFFFu) >> 4) | (static_cast<uint64_t>(16 >> 4) << 16)
        | (static_cast<uint64_t>((sbo & 0x3FFFFu) >> 4) << 32) | (static_cast<uint64_t>(1) << 46)
        | (static_cast<uint64_t>(mode) << 61);
}
#endif
"""


def mma_helper(kind: str, group: int, a_in_tmem: bool) -> str:
    """`exo_Sm100_mma_<kind>[_ts]_cta<group>`: one `tcgen05.mma.cta_group::<group>.kind::<kind>`
    with D in tensor memory, A by descriptor (or, `_ts`, at a TMEM address), B by descriptor;
    `accumulate` is the enable-input-d predicate. Rules: BW-CG-3, BW-CG-9, BW-CG-10"""
    ts = "_ts" if a_in_tmem else ""
    name = f"exo_Sm100_mma_{kind}{ts}_cta{group}"
    a_type, a_operand = ("uint32_t", "[%1]") if a_in_tmem else ("uint64_t", "%1")
    a_constraint = '"r"(a)' if a_in_tmem else '"l"(a)'
    return "\n".join([
        f"#ifndef {name.upper()}", f"#define {name.upper()}",
        f"static __device__ __forceinline__ void {name}(",
        f"    uint32_t d, {a_type} a, uint64_t b, uint32_t idesc, uint32_t accumulate)", "{",
        '    asm volatile("{\\n\\t.reg .pred exo_p;\\n\\t"',
        '                 "setp.ne.b32 exo_p, %4, 0;\\n\\t"',
        f'                 "tcgen05.mma.cta_group::{group}.kind::{kind} [%0], {a_operand}, "',
        '                 "%2, %3, "',
        '                 "exo_p;\\n\\t}"',
        f'                 :: "r"(d), {a_constraint}, "l"(b), "r"(idesc), "r"(accumulate) '
        ': "memory");',
        "}", "#endif", ""])


def ld_st_helper(verb: str, n: int) -> str:
    """`exo_Sm100_tmemLd32x32b_x<N>` / `exo_Sm100_tmemSt32x32b_x<N>`: the calling warp's 32
    lanes (lane quarter warp mod 4 of the warpgroup, PTX ISA "tcgen05.ld": a warp reaches only
    its quarter) x N columns, one lane per thread, from (into) N registers.
    Rules: BW-CG-5, BW-CG-10"""
    name = f"exo_Sm100_tmem{verb.capitalize()}32x32b_x{n}"
    shape = f"tcgen05.{verb}.sync.aligned.32x32b.x{n}.b32"
    if verb == "ld":
        regs = ", ".join(f"%{k}" for k in range(n))
        asm = [f'    asm volatile("{shape} {{{regs}}}, [%{n}];"',
               "                 : " + ", ".join(f'"=f"(d[{k}])' for k in range(n)),
               '                 : "r"(taddr + lanes) : "memory");']
    else:
        regs = ", ".join(f"%{k + 1}" for k in range(n))
        asm = [f'    asm volatile("{shape} [%0], {{{regs}}};"',
               '                 :: "r"(taddr + lanes), '
               + ", ".join(f'"f"(d[{k}])' for k in range(n)) + ' : "memory");']
    const = "" if verb == "ld" else "const "
    return "\n".join([
        f"#ifndef {name.upper()}", f"#define {name.upper()}",
        f"static __device__ __forceinline__ void {name}({const}float* d, uint32_t taddr)", "{",
        "    const uint32_t lanes = (32u * ((threadIdx.x / 32u) % 4u)) << 16;",
        *asm, "}", "#endif", ""])


ROWS = r"""#ifndef EXO_SM100_ROWS
#define EXO_SM100_ROWS
// BW-CG-6: after tcgen05.wait::ld the loaded registers are read only from here on (the compiler
// must not move their uses above the wait; PTX leaves earlier reads undefined).
template <int Count>
static __device__ __forceinline__ void exo_Sm100_pinRegs(float* d)
{
#pragma unroll
    for (int i = 0; i < Count; i++) {
        asm volatile("" : "+f"(d[i]) :: "memory");
    }
}

// BW-CG-10: a warpgroup zeroes its tile (each thread its row's registers).
template <int N>
static __device__ __forceinline__ void exo_Sm100_zeroRow(float* d)
{
#pragma unroll
    for (int c = 0; c < N; c++) {
        d[c] = 0.0f;
    }
}

// BW-CG-5: a warpgroup's tcgen05.ld.32x32b tile, row (thread index mod 128) per thread, stored
// row-major with the window's strides.
template <int N>
static __device__ __forceinline__ void exo_Sm100_storeRow(
    float* dst, int64_t rs, int64_t cs, const float* src)
{
    const int64_t row = threadIdx.x % 128;
#pragma unroll
    for (int c = 0; c < N; c++) {
        dst[row * rs + c * cs] = src[c];
    }
}
#endif
"""
