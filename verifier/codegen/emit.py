"""`emit_cuda`: one self-contained `.cu` file for a verified proc.

Reads a proc and the certificate of its proof; produces the file text: certificate header,
includes and macros, helper functions of the used instructions, window structs, one struct +
`__global__` kernel + launcher per `CudaDeviceFunction`, and the host function. Refuses
(InternalError) a certificate for another proc or another IR. Unsupported constructs raise
`Unsupported`; legality problems found only here raise `RejectedInput` (ERR-L06, ERR-A23).
Non-goals: building, running or re-verifying the code.
"""

from __future__ import annotations

from verifier.codegen import sm100, tma
from verifier.codegen.certificate import check_certificate, emitted_file
from verifier.codegen.data_rings import lower_data_rings
from verifier.codegen.host import HostEmitter
from verifier.codegen.instrs import helpers_for
from verifier.codegen.mbarrier_text import helpers as mbarrier_helpers
from verifier.codegen.names import Namer
from verifier.codegen.targets import required_target, target_lines
from verifier.codegen.tensormap import HOST_HELPER as TENSOR_MAP_HELPER
from verifier.codegen.tensormap import param_struct
from verifier.diagnostics import SporkError, UnhandledNode
from verifier.lang.ir import ir
from verifier.lang.rewrite.inline import inline_calls
from verifier.lang.stdlib.instrs import Instr
from verifier.results import Certificate

PRELUDE = r"""#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// `assert` of the proc (LANG-8.6): a compiler assumption, never checked at run time.
#ifndef EXO_ASSUME
#if defined(__clang__)
#define EXO_ASSUME(cond) __builtin_assume(cond)
#else
#define EXO_ASSUME(cond) ((void)0)
#endif
#endif

// setmaxnreg (LANG-8.4) exists only in arch-specific targets; elsewhere it is left out.
#ifndef EXO_SETMAXNREG
#if defined(__CUDA_ARCH_FEAT_SM90_ALL) || defined(__CUDA_ARCH_FEAT_SM100_ALL)
#define EXO_SETMAXNREG(text) asm volatile(text)
#else
#define EXO_SETMAXNREG(text) ((void)0)
#endif
#endif

// Every CUDA runtime call goes through this macro; define it to check errors.
#ifndef EXO_CUDA_CHECK
#define EXO_CUDA_CHECK(call) ((void)(call))
#endif
"""


SWIZZLE_HELPER = r"""#ifndef EXO_SWIZZLED
#define EXO_SWIZZLED
// LANG-6.3: Sm90_SmemSwizzled(S) stores the 16-byte chunk c of a row at c XOR (row mod 8 / k) as
// TMA and wgmma do: bits [4, 4 + log2(S / 16)) of the shared address XOR bits [7, ...).
template <int Swizzle, typename T>
static __device__ __forceinline__ T* exo_swizzled(T* ptr)
{
    const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
    const uint32_t flip = ((addr >> 7) & (Swizzle / 16 - 1)) << 4;
    return reinterpret_cast<T*>(reinterpret_cast<char*>(ptr) + ((addr ^ flip) - addr));
}
#endif
"""


def _instr_calls(stmts: tuple[ir.Stmt, ...], out: list[tuple[str, dict[str, int]]]) -> None:
    for s in stmts:
        match s:
            case ir.Call(callee=Instr() as instr):
                call = (instr.name, {k: v for k, v in s.kwargs if isinstance(v, int)})
                if call not in out:
                    out.append(call)
            case ir.For(body=body) | ir.DeviceFunction(body=body) | ir.Warps(body=body):
                _instr_calls(body, out)
            case ir.If(body=body, orelse=orelse):
                _instr_calls(body, out)
                _instr_calls(orelse, out)
            case ir.Call() | ir.Alloc() | ir.Assign() | ir.Reduce() | ir.WindowStmt() \
                    | ir.Pass() | ir.Fence() | ir.Arrive() | ir.Await():
                pass
            case _:
                raise UnhandledNode(s)


def _uses_swizzled_smem(stmts: tuple[ir.Stmt, ...]) -> bool:
    for s in stmts:
        if isinstance(s, ir.Alloc) and getattr(s.mem, "name", "") == "Sm90_SmemSwizzled":
            return True
        if isinstance(s, ir.DeviceFunction) and sm100.relaid_operands(s):  # BW-CG-11
            return True
        if _uses_swizzled_smem(getattr(s, "body", ())) or \
                _uses_swizzled_smem(getattr(s, "orelse", ())):
            return True
    return False


def _window_struct(struct: str, rank: int, ctype: str) -> str:
    """A window argument: data pointer and one stride per dimension (include-guarded, so that
    several emitted files may share one translation unit)."""
    guard = "EXO_WIN_" + struct.removeprefix("exo_win_").upper()
    return "\n".join([f"#ifndef {guard}", f"#define {guard}", f"struct {struct}", "{",
                      f"    {ctype}* data;", f"    int64_t strides[{rank}];", "};", "#endif", ""])


def emit_cuda(proc: ir.Proc, cert: Certificate) -> str:
    """The `.cu` text of a proc whose certificate matches its name and IR hash.

    Rules: LANG-8.1 (BW-CG-8), LANG-8.2, LANG-8.3, LANG-8.4, LANG-8.5, LANG-8.6, LANG-8.7, SEM-8.1,
    SEM-8.5, COLL-4.3, COLL-4.6, COLL-5.8"""
    check_certificate(proc, cert)
    proc = inline_calls(proc)  # CG-C1: the program the proof read (CALL-1)
    proc = lower_data_rings(proc)  # DIAL-18: a data ring is its physical slots
    sm100.check_kernels(proc)
    try:
        host = HostEmitter(proc, Namer(proc), dict(cert.releases), cert.assumptions)
        function = host.function()
    except SporkError as err:
        if err.loc.line == 0:
            err.loc = proc.loc
        raise
    calls: list[tuple[str, dict[str, int]]] = []
    _instr_calls(proc.body, calls)
    target = required_target(proc, (name for name, _ in calls))
    thunderkittens = any(name.startswith(("cuda_tk_", "Sm90_tk_")) for name, _ in calls)  # TK-4, TK-CG-6
    parts = ["\n".join(target_lines(proc, target, thunderkittens)), PRELUDE]
    if cert.assumptions:  # the host function reports a violated assumption (CG-A1)
        parts.append("#include <stdio.h>\n")
    if host.tensor_maps:
        parts.append(TENSOR_MAP_HELPER)
    if _uses_swizzled_smem(proc.body):
        parts.append(SWIZZLE_HELPER)
    helpers = helpers_for(calls)
    if helpers:
        parts.append(helpers.strip("\n") + "\n")
    if any(name in tma.TMA_ROWS for name, _ in calls):
        parts.append(tma.helpers())
    if host.rings:
        parts.append(mbarrier_helpers(host.rings))
    for rank in sorted(host.map_structs):
        parts.append(param_struct(rank))
    for struct, (rank, ctype) in host.window_structs.items():
        parts.append(_window_struct(struct, rank, ctype))
    if host.top:
        parts.append("\n".join(host.top))
    parts.append("\n".join(function) + "\n")
    return emitted_file(proc.loc.file, cert, "\n".join(parts))
