"""The error catalog for barrier variables (language.md §5, §9.3-9.4; collectives.md COLL-5.10):
code, message keyword and `file:line:col` of each error, plus the multicast Arrives whose
static rules hold and which are then reported unsupported (ERR-V11) — never before a static
error of the same proc."""

from __future__ import annotations

from pathlib import Path

import pytest
from catalog_support import Case, check_case

T = "            "
LOOP = [T + "for t in cuda_threads(0, 256):"]
CG = [T + "cg: barrier[256] @ CudaCommitGroup", *LOOP]
BAR = [T + "bar: barrier @ CudaMbarrier"]

# Multicast (LANG-5.6, 5.7, 5.13, COLL-5.10): 4 CTAs as 2 x 2, one Arrive per CTA multicast to
# its row and its column of bar.
CLUSTER = ["    with CudaDeviceFunction(blockDim=128, clusterDim=4):",
           "        for task in cuda_tasks(0, n):",
           T + "bar: barrier[2, 2] @ CudaMbarrier",
           T + "for m in cuda_threads(0, 2, unit=2 * cuda_cta_in_cluster):",
           T + "    for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):"]
U = T + "        "
AWAIT_MC = U + "Await(bar[m, c], cuda_in_order, ~0)"


def cluster(*lines: str) -> list[str]:
    return [*CLUSTER, *lines]


# A producer/consumer helper instruction with a trailing mbarrier (as TMA loads have): the
# closed library has none that spork-verify verifies, so the program declares one (LANG-3.7).
TMA_LIKE = ["from verifier.lang.stdlib.instrs import Instr, InstrParam",
            "tma_like = Instr('tma_like', (InstrParam('dst', 'tensor', 'w', 'CudaBasicSmem',",
            "                  lambda kw: (32,)),), tma_to_smem_async_instr, cuda_warp,",
            "                  trailing_mech='CudaMbarrier', barrier_units=0)"]

CASES = [
    Case("ERR-A05", "does not allow allocation in a scope using cpu_basic_device",
         ["    b: barrier @ CudaMbarrier  #!"], kernel=False),
    Case("ERR-A09", "requires trailing barrier expression in CudaMbarrier, not CudaCommitGroup",
         [T + "s: f32[32] @ CudaSmemLinear", *CG[:1], T + "with CudaWarps(0, 1):",
          T + "    tma_like(s[:]) >> cg[0]  #!"], prelude=TMA_LIKE),
    Case("ERR-A09", "requires trailing barrier expression in CudaMbarrier",
         [T + "s: f32[32] @ CudaSmemLinear", T + "with CudaWarps(0, 1):",
          T + "    tma_like(s[:])  #!"], prelude=TMA_LIKE),
    Case("ERR-A25", "#intervals in barrier bar[0:1] wrong; have 1, need 0",
         [T + "s: f32[32] @ CudaSmemLinear", T + "bar: barrier[1] @ CudaMbarrier",
          T + "with CudaWarps(0, 1):", T + "    tma_like(s[:]) >> bar[:]  #!"], prelude=TMA_LIKE),
    # LANG-5.21: two live Sm80 commit groups clash (their Arrives set the lowered type)
    Case("ERR-A17", "of lowered barrier type Sm80_commit_group due to another such live barrier "
         "\"cg\"", [T + "cg: barrier[256] @ CudaCommitGroup",
                    T + "cg2: barrier[256] @ CudaCommitGroup  #!", *LOOP,
                    T + "    Arrive(Sm80_cp_async, 1) >> cg[t]", T + "    Await(cg[t], cuda_in_order, 0)",
                    T + "    Arrive(Sm80_cp_async, 1) >> cg2[t]",
                    T + "    Await(cg2[t], cuda_in_order, 0)"]),
    # LANG-5.12 / COLL-5.10 (ERR-A24): one base collective per role and per guard pairing
    Case("ERR-A24", "has inconsistent collective tiling with previous Arrive(cuda_in_order) >> "
         "bar[w]", [T + "bar: barrier[2] @ CudaMbarrier", T + "with CudaWarps(0, 2):",
                    T + "    for w in cuda_threads(0, 2, unit=cuda_warp):",
                    T + "        Arrive(cuda_in_order) >> bar[w]",
                    T + "        Await(bar[w], cuda_in_order, ~0)", T + "with CudaWarps(1, 3):",
                    T + "    for w in cuda_threads(0, 2, unit=cuda_warp):",
                    T + "        Arrive(cuda_in_order) >> bar[w]  #!",
                    T + "        Await(bar[w], cuda_in_order, ~0)"]),
    Case("ERR-A24", "has inconsistent collective tiling with previous Arrive(...) >> bar [guards]",
         [*BAR, T + "with CudaWarps(0, 1):", T + "    Arrive(cuda_in_order) >> bar",
          T + "with CudaWarps(1, 2):", T + "    Await(bar, cuda_in_order, ~0)  #!"]),
    Case("ERR-A24", "with previous Await(full, ...) [guarded_by]",
         [T + "full: barrier @ CudaMbarrier", T + "empty: barrier(full) @ CudaMbarrier",
          T + "with CudaWarps(0, 1):", T + "    Await(empty, cuda_in_order, ~1)",
          T + "    Arrive(cuda_in_order) >> full", T + "with CudaWarps(1, 2):",
          T + "    Await(full, cuda_in_order, ~0)", T + "with CudaWarps(2, 3):",
          T + "    Arrive(cuda_in_order) >> empty  #!"]),
    Case("ERR-A24", "[different_arrive_await_threads=False]",
         [T + "cg: barrier[128] @ CudaCommitGroup", T + "with CudaWarps(0, 4):",
          T + "    for t in cuda_threads(0, 128):", T + "        Arrive(Sm80_cp_async) >> cg[t]",
          T + "with CudaWarps(4, 8):", T + "    for t in cuda_threads(0, 128):",
          T + "        Await(cg[t], cuda_in_order, 0)  #!"]),
    Case("ERR-A24", "Expected idx[1] to be 0:2",
         cluster(U + "Arrive(cuda_in_order) >> bar[m, 0:1] >> bar[0:2, c]  #!", AWAIT_MC),
         kernel=False),
    Case("ERR-A24", "multicasted m fails convergence requirement due to `if (c == 0)`",
         cluster(U + "if c == 0:", U + "    Arrive(cuda_in_order) >> bar[m, :] >> bar[:, c]  #!",
                 U + "    Await(bar[m, c], cuda_in_order, ~0)"), kernel=False),
    Case("ERR-A24", "thread_pitch 128 not divisible by blockDim (256); cannot be multicast",
         [T + "bar: barrier[2] @ CudaMbarrier", T + "for w in cuda_threads(0, 2, unit=4 * cuda_warp):",
          T + "    Arrive(cuda_in_order) >> bar[w] >> bar[:]  #!",
          T + "    Await(bar[w], cuda_in_order, ~0)"]),
    # LANG-5.6 (ERR-A26): the home barrier
    Case("ERR-A26", "missing >> trailing barrier exprs", [*BAR, T + "Arrive(cuda_in_order)  #!"]),
    Case("ERR-A26", "cannot arrive on different queue barrier arrays",
         [*BAR, T + "bar2: barrier @ CudaMbarrier", T + "Arrive(cuda_in_order) >> bar >> bar2  #!"]),
    Case("ERR-A26", "c mismatches idx[0] in previous trailing barrier expressions",
         cluster(U + "Arrive(cuda_in_order) >> bar[m, :] >> bar[c, m]  #!", AWAIT_MC),
         kernel=False),
    Case("ERR-A26", "at least one trailing barrier expression must have idx[1] be a point",
         cluster(U + "Arrive(cuda_in_order) >> bar[m, :]  #!", AWAIT_MC), kernel=False),
    Case("ERR-A26", "expected a plain variable, not (m + 0)",
         cluster(U + "Arrive(cuda_in_order) >> bar[m + 0, :] >> bar[:, c]  #!", AWAIT_MC),
         kernel=False),
    Case("ERR-A27", "missing Await(cg, ...) for cg",
         [T + "cg: barrier[256] @ CudaCommitGroup  #!", *LOOP,
          T + "    Arrive(Sm80_cp_async, 1) >> cg[t]"]),
    Case("ERR-A28", "incompatible sync-tl (cuda_temporal) with previous Arrive",
         [*BAR, T + "Arrive(cuda_in_order) >> bar", T + "Await(bar, cuda_in_order, ~0)",
          T + "Arrive(cuda_temporal) >> bar  #!", T + "Await(bar, cuda_in_order, ~0)"]),
    Case("ERR-A28", "incompatible sync-tl (cuda_temporal) with previous Await",
         [*BAR, T + "Arrive(cuda_in_order) >> bar", T + "Await(bar, cuda_in_order, ~0)",
          T + "Arrive(cuda_in_order) >> bar", T + "Await(bar, cuda_temporal, ~0)  #!"]),
    Case("ERR-A28", "incompatible multicasts with previous Arrive",
         cluster(U + "Arrive(cuda_in_order) >> bar[m, :] >> bar[:, c]", AWAIT_MC,
                 U + "Arrive(cuda_in_order) >> bar[m, c]  #!", AWAIT_MC), kernel=False),
    Case("ERR-A29", "requires N >= 0", [*CG, T + "    Arrive(Sm80_cp_async, 1) >> cg[t]",
                                        T + "    Await(cg[t], cuda_in_order, ~0)  #!"]),
    Case("ERR-A29", "requires N < 0", [*BAR, T + "Arrive(cuda_in_order) >> bar",
                                       T + "Await(bar, cuda_in_order, 0)  #!"]),
    Case("ERR-A29", "incompatible N (CudaMbarrier uniform-N requirement)",
         [*BAR, T + "Arrive(cuda_in_order) >> bar", T + "Await(bar, cuda_in_order, ~0)",
          T + "Arrive(cuda_in_order) >> bar", T + "Await(bar, cuda_in_order, ~1)  #!"]),
    # LANG-5.5, 5.7 (ERR-A30): where intervals may appear
    Case("ERR-A30", "multicast is for Arrive, not Await",
         cluster(U + "Arrive(cuda_in_order) >> bar[m, :] >> bar[:, c]",
                 U + "Await(bar[m, :], cuda_in_order, ~0)  #!"), kernel=False),
    Case("ERR-A30", "CudaCommitGroup does not support multicast",
         [T + "cg: barrier[2, 128] @ CudaCommitGroup",
          T + "for a in cuda_threads(0, 2, unit=128 * cuda_thread):",
          T + "    for t in cuda_threads(0, 128):",
          T + "        Arrive(Sm80_cp_async) >> cg[a, :] >> cg[:, t]  #!",
          T + "        Await(cg[a, t], cuda_in_order, 0)"]),
    Case("ERR-A31", "supports_guards=False", [T + "a: barrier[256] @ CudaCommitGroup",
                                              T + "b: barrier(a)[256] @ CudaCommitGroup  #!"]),
    Case("ERR-A32", "expect Await(b, ...) before", [
        T + "a: barrier @ CudaMbarrier", T + "b: barrier(a) @ CudaMbarrier",
        T + "Arrive(cuda_in_order) >> a  #!", T + "Await(b, cuda_in_order, ~1)",
        T + "Arrive(cuda_in_order) >> b", T + "Await(a, cuda_in_order, ~0)"]),
    Case("ERR-L03", "expects collective unit cuda_thread", [
        T + "cg: barrier @ CudaCommitGroup", T + "Arrive(Sm80_cp_async, 1) >> cg  #!",
        T + "Await(cg, cuda_in_order, 0)"]),
    Case("ERR-L03", "does not support Arrive(cuda_in_order) (wrong first sync-tl)",
         [*CG, T + "    Arrive(cuda_in_order) >> cg[t]  #!", T + "    Await(cg[t], cuda_in_order, 0)"]),
    Case("ERR-L04", "mbarrier Arrive sync-tl tma_to_smem_async not supported",
         [*BAR, T + "Arrive(tma_to_smem_async) >> bar  #!", T + "Await(bar, cuda_in_order, ~0)"]),
    Case("ERR-L04", "must have some await with nonzero skips",
         [T + "full: barrier @ CudaMbarrier", T + "empty: barrier(full) @ CudaMbarrier  #!",
          T + "with CudaWarps(0, 1):", T + "    Await(empty, cuda_in_order, ~0)",
          T + "    Arrive(cuda_in_order) >> full", T + "with CudaWarps(1, 2):",
          T + "    Await(full, cuda_in_order, ~0)", T + "    Arrive(cuda_in_order) >> empty"]),
    Case("ERR-L04", "resident in 1 CTA only",
         ["    with CudaDeviceFunction(blockDim=128, clusterDim=2):",
          "        for task in cuda_tasks(0, n):", *BAR, T + "Arrive(cuda_in_order) >> bar  #!",
          T + "Await(bar, cuda_in_order, ~0)"], kernel=False),
    Case("ERR-L04", "Sm80_cp_async mbarrier must be within 1 CTA",
         cluster(U + "Arrive(Sm80_cp_async) >> bar[m, :] >> bar[:, c]  #!", AWAIT_MC),
         kernel=False),
]

C2 = ["    with CudaDeviceFunction(blockDim=128, clusterDim=2):", "        for task in cuda_tasks(0, n):",
      T + "cs: barrier @ CudaClusterSync"]
CASES += [
    Case("ERR-L02", "Arrive for cs must be by full cluster",
         [*C2, T + "for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):",
          T + "    Arrive(cuda_in_order) >> cs  #!"], kernel=False),
    # LANG-5.11 before LANG-5.20: the mismatch with the first Await is reported, naming both
    # statements (upstream's message), although wgmma_async is no CudaClusterSync sync-tl
    Case("ERR-A28", "previous Await Await(cs, cuda_in_order, 0) at line",
         [*C2, T + "Arrive(cuda_in_order) >> cs", T + "Await(cs, cuda_in_order, 0)",
          T + "Arrive(cuda_in_order) >> cs", T + "Await(cs, wgmma_async, 0)  #!"], kernel=False),
    Case("ERR-A17", "lowered barrier type cluster_sync due to another such live barrier \"cs\"",
         [*C2, T + "Fence(cuda_in_order, cuda_in_order)  #!", T + "Arrive(cuda_in_order) >> cs",
          T + "Await(cs, cuda_in_order, 0)"], kernel=False),
]

DEFERRED = [
    # the static error after the multicast Arrive comes first (exit 2)
    Case("ERR-A18", "one thread only",
         cluster(U + "Arrive(cuda_in_order) >> bar[m, :] >> bar[:, c]", AWAIT_MC,
                 U + "x[task, 0] = 1.0  #!"), kernel=False),
    # an instr completing on an mbarrier without a known transaction byte count (TX-1)
    Case("ERR-V11", "transaction byte count",
         [T + "s: f32[32] @ CudaSmemLinear", T + "bar: barrier @ CudaMbarrier",
          T + "with CudaWarps(0, 1):", T + "    Await(bar, cuda_in_order, ~1)",
          T + "    tma_like(s[:]) >> bar  #!", T + "    Arrive(cuda_in_order) >> bar"],
         prelude=TMA_LIKE, verdict="unsupported"),
]


@pytest.mark.rule("LANG-5.6")
@pytest.mark.rule("LANG-5.12")
@pytest.mark.rule("LANG-5.13")
@pytest.mark.rule("COLL-5.10")
@pytest.mark.parametrize("case", CASES + DEFERRED, ids=[c.id for c in CASES + DEFERRED])
def test_barrier_errors_report_code_keyword_and_location(tmp_path: Path, case: Case) -> None:
    check_case(tmp_path, case)
