"""CUDA text of `CudaMbarrier` rings (SEM-8.5, SEM-8.6): state, setup, Arrive, Await, TMA slot.

Reads the `MbarrierRing`s planned by `mbarrier.py`; produces the `exo_SyncState` fields, the
initialisation in `exo_deviceSetup`, and the lowering of `Arrive(...) >> z[...]` (locally, and
through `mapa` to the other CTAs of a multicast), `Await(z[...], τ2, ~lag)` and a TMA's
trailing `>> z[...]` (the current ArriveIdx slot, no arrive, no advance).
Non-goals: deciding ring shapes (planning is `mbarrier.py`).
"""

from __future__ import annotations

from verifier.codegen.exprs import c_add, c_mul, dense_strides
from verifier.codegen.mbarrier import MbarrierRing
from verifier.codegen.sm100 import commit_lines
from verifier.diagnostics import InternalError, SrcLoc
from verifier.lang.ir import ir
from verifier.lang.stdlib.timelines import SYNC_SETS, QualTL, SyncTL

STATE = "exo_syncState"
STATE_TYPE = "exo_SyncState"
ASYNC_PROXY_QUALS = frozenset({QualTL.async_, QualTL.tmaS, QualTL.tmaG, QualTL.wgS})
# fence.proxy.async needs sm_90; below it there is no async proxy, so the fence is a no-op.
PROXY_FENCE = ["#if __CUDA_ARCH__ >= 900", 'asm volatile("fence.proxy.async;" ::: "memory");',
               "#endif"]

def _wait_helper(name: str, guard: str, wait_ptx: str, comment: str) -> str:
    """An include-guarded spin loop on one mbarrier phase parity (`wait_ptx`: the text of
    the wait instruction setting `exo_p`; the sm_90 form with test_wait below sm_90 when
    CTA-scoped)."""
    def loop(ptx: str) -> str:
        return ('        asm volatile("{\\n\\t.reg .pred exo_p;\\n\\t"\n'
                f'                     "{ptx} exo_p, [%1], %2;\\n\\t"\n'
                '                     "selp.u32 %0, 1, 0, exo_p;\\n\\t}"\n'
                '                     : "=r"(exo_done) : "r"(bar), "r"(parity) : "memory");\n')
    body = loop(wait_ptx)
    if ".cta." in wait_ptx:
        body = ("#if __CUDA_ARCH__ >= 900\n" + body + "#else\n" +
                loop("mbarrier.test_wait.parity.shared::cta.b64") + "#endif\n")
    return (f"#ifndef {guard}\n#define {guard}\n{comment}"
            f"static __device__ __forceinline__ void {name}(uint32_t bar, uint32_t parity)\n"
            "{\n    uint32_t exo_done = 0;\n    do {\n" + body + "    } while (!exo_done);\n}\n"
            "#endif\n")


HELPERS = _wait_helper(
    "exo_mbarrierWait", "EXO_MBARRIER_WAIT",
    "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64",
    "// SEM-8.5: spin until the phase of parity `parity` of the mbarrier at shared address `bar` "
    "has\n// completed (try_wait from sm_90 on, test_wait below).\n")

CLUSTER_HELPERS = _wait_helper(
    "exo_mbarrierWaitCluster", "EXO_MBARRIER_CLUSTER",
    "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64",
    "// SEM-8.5 with clusterDim > 1: other CTAs arrive on (and TMA multicasts complete) this "
    "CTA's\n// mbarriers, so the wait acquires at cluster scope.\n")

REMOTE_HELPERS = r"""#ifndef EXO_MBARRIER_REMOTE
#define EXO_MBARRIER_REMOTE
// SEM-8.5: arrive on the mbarrier at the same shared offset in the CTA of cluster rank `rank`.
static __device__ __forceinline__ void exo_mbarrierArriveRemote(uint32_t bar, uint32_t rank)
{
    uint32_t exo_remote = 0;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(exo_remote) : "r"(bar), "r"(rank));
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];"
                 :: "r"(exo_remote) : "memory");
}
#endif
"""


def helpers(rings: list[MbarrierRing]) -> str:
    """The wait helpers the rings use (CTA or cluster scope) and the remote arrive of
    multicast rings (include-guarded; unused static functions would draw warnings)."""
    out = ""
    if any(not r.cluster for r in rings):
        out += HELPERS
    if any(r.cluster for r in rings):
        out += CLUSTER_HELPERS
    if any(r.rank_deltas != (0,) and not r.commit for r in rings):
        out += REMOTE_HELPERS
    return out


def u32(n: int) -> str:
    return f"{n}u"


def _base(ring: MbarrierRing) -> str:
    return f"static_cast<uint32_t>(__cvta_generic_to_shared(exo_smem + {ring.offset}))"


def asm_line(text: str, operands: str) -> str:
    return f'asm volatile("{text}" :: {operands} : "memory");'


def state_fields(rings: dict[ir.Sym, MbarrierRing], cname: dict[ir.Sym, str]) -> list[str]:
    """Members of `exo_SyncState`, all zero-initialised. Rules: SEM-8.5"""
    out = []
    for sym, ring in rings.items():
        name = cname[sym]
        out += [f"uint32_t {name}_arriveIdx = 0;  // {sym.name}: ring depth {ring.depth}",
                f"uint32_t {name}_awaitIdx = 0;",
                f"uint32_t {name}_parity = 0;  // one bit per ring slot"]
        if ring.lag:
            out.append(f"uint32_t {name}_skips = 0;  // trivial awaits taken, up to {ring.lag}")
    return out


def uses_async_proxy(stmts: tuple[ir.Stmt, ...]) -> bool:
    """Whether a sync statement involves an async-proxy qual-tl (fence after init)."""
    for s in stmts:
        tls: list[SyncTL] = []
        match s:
            case ir.Fence(first=a, second=b):
                tls = [a, b]
            case ir.Arrive(first=a):
                tls = [a]
            case ir.Await(second=b):
                tls = [b]
        if any(SYNC_SETS[t].full & ASYNC_PROXY_QUALS for t in tls):
            return True
        for child in ("body", "orelse"):
            if uses_async_proxy(getattr(s, child, ())):
                return True
    return False


def _describe(sym: ir.Sym, ring: MbarrierRing) -> list[str]:
    counts = sorted(set(ring.counts))
    shown = f"arrival count {counts[0]}" if len(counts) == 1 else \
        f"arrival counts {list(ring.counts)} per slice"
    out = [f"// {sym.name}: {ring.slices} x ring of depth {ring.depth} at exo_smem + "
           f"{ring.offset}, {shown}"]
    if ring.slices > 1:
        out.append("// slice index (mixed radix, last fastest): " +
                   ", ".join(f"{d.name} < {d.extent}" for d in ring.digits))
    if ring.cta_digits:
        out.append("// one copy per CTA (CTA-in-cluster axes " +
                   ", ".join(f"{d.name} < {d.extent}" for d in ring.cta_digits) + ")")
    if ring.rank_deltas != (0,):
        out.append(f"// multicast: each Arrive reaches cluster ranks own ^ "
                   f"{list(ring.rank_deltas)}")
    return out


def setup_lines(rings: dict[ir.Sym, MbarrierRing], proxy: bool) -> list[str]:
    """`exo_deviceSetup`: thread 0 initialises every ring slot with the arrival count;
    [`fence.mbarrier_init` with clusterDim > 1 or a TMA completing on a ring]; [fence.proxy.async];
    CTA barrier, or with clusterDim > 1 a cluster barrier (peers arrive remotely).
    Rules: SEM-8.5, SEM-8.6"""
    out = ["if (threadIdx.x == 0) {"]
    for sym, ring in rings.items():
        out += [f"    {line}" for line in _describe(sym, ring)]
        first = 0
        while first < ring.slices:  # one loop per run of slices with the same count
            last = first
            while last + 1 < ring.slices and ring.counts[last + 1] == ring.counts[first]:
                last += 1
            lo, hi = first * ring.depth, (last + 1) * ring.depth
            start = f"exo_i = {u32(lo)}" if lo else "exo_i = 0"
            out += [f"    for (uint32_t {start}; exo_i < {u32(hi)}; exo_i++) {{",
                    "        " + asm_line("mbarrier.init.shared::cta.b64 [%0], %1;",
                                      f'"r"({_base(ring)} + 8u * exo_i), '
                                      f'"r"({u32(ring.counts[first])})'),
                    "    }"]
            first = last + 1
    out.append("}")
    cluster = any(ring.cluster for ring in rings.values())
    tma = any(ring.tma for ring in rings.values())
    if cluster or tma:  # peers or the TMA unit update the mbarriers: release the inits to them
        out.append('asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");')
    if proxy or tma:
        out += PROXY_FENCE
    return out + block_barrier(cluster)


def block_barrier(cluster: bool) -> list[str]:
    """Every thread of the CTA, or with clusterDim > 1 of the cluster (release/acquire)."""
    if cluster:
        return ['asm volatile("barrier.cluster.arrive.release.aligned;\\n\\t"',
                '             "barrier.cluster.wait.acquire.aligned;" ::: "memory");']
    return ['asm volatile("barrier.cta.sync 0;" ::: "memory");']


def index_digits(ring: MbarrierRing, explicit: list[str], ctrl: dict[ir.Sym, str],
                 loc: SrcLoc | None = None) -> list[str]:
    """C text of the per-CTA slice digits at a use: the explicit indices that are not
    CTA-in-cluster axes, then the C names of the enclosing iterators of the allocation.
    Rules: COLL-5.11"""
    skip = ring.cta_positions
    out = [text for k, text in enumerate(explicit) if k not in skip]
    for d in ring.digits:
        if d.key is None:
            continue
        if d.key not in ctrl:
            raise InternalError(f"{ring.sym.name}: iterator {d.name} not in scope", loc)
        out.append(ctrl[d.key])
    if len(out) != len(ring.digits):
        raise InternalError(f"{ring.sym.name}: {len(out)} of {len(ring.digits)} slice digits",
                            loc)
    return out


def slot_address(ring: MbarrierRing, idx: list[str], pos: str) -> str:
    """Shared address of ring slot `pos` of the slice whose digits are `idx` (mixed radix,
    last fastest). Rules: COLL-5.11, SEM-8.5"""
    strides = dense_strides([str(d.extent) for d in ring.digits])
    sl = c_add([c_mul(i, st) for i, st in zip(idx, strides, strict=True)])
    slot = pos if sl == "0" else f"{c_mul(sl, str(ring.depth))} + {pos}"
    return f"{_base(ring)} + 8u * ({slot})"


def trailing_slot(ring: MbarrierRing, cname: str, idx: list[str]) -> str:
    """The slot a TMA's `>> z[...]` completes on: the one the issuing thread's next Arrive
    completes (ArriveIdx, not advanced). Rules: SEM-8.6"""
    return slot_address(ring, idx, f"{STATE}.{cname}_arriveIdx")


def arrive_lines(ring: MbarrierRing, cname: str, idx: list[str],
                 cluster_dim: int = 1, first: SyncTL | None = None,
                 cta_group: int = 1) -> list[str]:
    """Arrive on slot ArriveIdx (noinc cp.async arrive for τ1 ⊑ Sm80_cp_async, tcgen05.commit
    for τ1 = tcgen05_commit), in this CTA and through `mapa` (or the commit's CTA mask) in the
    CTAs of rank own ^ delta of a multicast; then advance ArriveIdx mod depth.
    Rules: SEM-8.5, BW-CG-4"""
    pos = f"{STATE}.{cname}_arriveIdx"
    slot = slot_address(ring, idx, pos)
    advance = f"{pos} = ({pos} + 1u) % {u32(ring.depth)};"
    if first is SyncTL.tcgen05_commit:
        return commit_lines(slot, ring.rank_deltas, cluster_dim, cta_group) + [advance]
    if ring.cp_async:
        return [asm_line("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];", f'"r"({slot})'),
                advance]
    if ring.rank_deltas == (0,):
        return [asm_line("mbarrier.arrive.shared::cta.b64 _, [%0];", f'"r"({slot})'), advance]
    out = ["{", f"    const uint32_t exo_bar = {slot};",
           f"    const uint32_t exo_rank = blockIdx.x % {u32(cluster_dim)};"]
    for delta in ring.rank_deltas:
        if delta == 0:
            out.append("    " + asm_line("mbarrier.arrive.shared::cta.b64 _, [%0];", '"r"(exo_bar)'))
        else:
            out.append(f"    exo_mbarrierArriveRemote(exo_bar, exo_rank ^ {u32(delta)});")
    return out + ["}", advance]


def await_lines(ring: MbarrierRing, cname: str, idx: list[str], proxy: bool,
                loc: SrcLoc | None) -> list[str]:
    """Skips < lag: a trivial await. Otherwise wait for the parity bit of slot AwaitIdx, flip
    it, advance AwaitIdx mod depth, [fence.proxy.async]. Rules: SEM-8.5"""
    if ring.depth <= 0:
        raise InternalError(f"{ring.sym.name}: ring depth {ring.depth}", loc)
    st = f"{STATE}.{cname}"
    wait = "exo_mbarrierWaitCluster" if ring.cluster else "exo_mbarrierWait"
    body = ["const uint32_t exo_slot = " + f"{st}_awaitIdx;",
            f"{wait}({slot_address(ring, idx, 'exo_slot')}, ({st}_parity >> exo_slot) & 1u);",
            f"{st}_parity ^= 1u << exo_slot;",
            f"{st}_awaitIdx = (exo_slot + 1u) % {u32(ring.depth)};"]
    if proxy:
        body += PROXY_FENCE
    if not ring.lag:
        return ["{"] + ["    " + line for line in body] + ["}"]
    return ([f"if ({st}_skips < {u32(ring.lag)}) {{", f"    {st}_skips++;", "} else {"]
            + ["    " + line for line in body] + ["}"])
