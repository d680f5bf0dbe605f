"""mbarrier rings (SEM-8.5): storage, init, per-thread ring state, Arrive and Await lowering."""

from __future__ import annotations

import re

import pytest
from codegen_support import example, local

from verifier import collectives
from verifier.codegen import emit_cuda, mbarrier, mbarrier_text
from verifier.diagnostics import Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.config import CudaDeviceFunction
from verifier.lang.stdlib.units import cuda_cta_in_cluster

INIT = 'asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;"'
ARRIVE = 'asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];"'


def _between(text: str, start: str, end: str) -> str:
    i = text.index(start)
    return text[i:text.index(end, i)]


def _task(text: str, name: str = "exo_deviceTask") -> str:
    return _between(text, f"void {name}(", "\n    }\n")


def _setup(text: str) -> str:
    return _between(text, "void exo_deviceSetup(", "\n    }\n")


@pytest.mark.rule("SEM-8.5")
@pytest.mark.rule("LANG-5.19")
def test_ws_ring_storage_and_init() -> None:
    # full (lag 0) and empty: barrier(full) (lag 3) form one guard cycle: depth 0 + 3 = 3.
    text = emit_cuda(*example("ws_ring"))
    setup = _setup(text)
    assert "if (threadIdx.x == 0) {" in setup
    # buf: f32[3, 32] takes bytes [0, 384); the rings follow, 8-byte aligned, 3 x 8 bytes each
    assert "// full: 1 x ring of depth 3 at exo_smem + 384, arrival count 32" in setup
    assert "// empty: 1 x ring of depth 3 at exo_smem + 408, arrival count 32" in setup
    assert setup.count("for (uint32_t exo_i = 0; exo_i < 3u; exo_i++) {") == 2
    assert setup.count(INIT) == 2
    assert setup.count('"r"(32u)') == 2  # one warp arrives: count 32
    assert "__cvta_generic_to_shared(exo_smem + 384)" in setup
    assert setup.index(INIT) < setup.index('asm volatile("barrier.cta.sync 0;" ::: "memory");')
    assert "fence.proxy.async" not in setup  # no sync statement involves the async proxy
    assert "exo_smemBytes = 432;" in text and "exo_config.dynamicSmemBytes = 432;" in text


@pytest.mark.rule("SEM-8.5")
def test_ws_ring_state_persists_across_tasks() -> None:
    text = emit_cuda(*example("ws_ring"))
    state = _between(text, "struct exo_SyncState", "};")
    for field in ("full_arriveIdx", "full_awaitIdx", "full_parity", "empty_arriveIdx",
                  "empty_awaitIdx", "empty_parity", "empty_skips"):
        assert f"uint32_t {field} = 0;" in state
    assert "full_skips" not in state  # lag 0: no trivial awaits
    main = _between(text, "void exo_deviceMainLoop(", "\n    }\n")
    decl = main.index("exo_SyncState exo_syncState;")
    assert decl < main.index("for (int64_t exo_taskIndex")  # once, before the task loop
    assert "exo_deviceTask(exo_smem, exo_deviceArgs, exo_task, exo_syncState);" in main
    assert "const exo_Task& exo_task, exo_SyncState& exo_syncState)" in text


@pytest.mark.rule("SEM-8.5")
def test_ws_ring_arrive_and_await() -> None:
    text = emit_cuda(*example("ws_ring"))
    task = _task(text)
    producer = _between(task, "CudaWarps_0_1_ < 32) {", "CudaWarps_1_2_")
    consumer = task[task.index("CudaWarps_1_2_ >= 32) {"):]
    # producer: Await(empty, ~3): three trivial awaits, then wait on the parity of the slot
    assert "// Await(empty, cuda_temporal, ~3)" in producer
    assert ("if (exo_syncState.empty_skips < 3u) {\n"
            "                    exo_syncState.empty_skips++;\n"
            "                } else {") in producer
    assert ("exo_mbarrierWait(static_cast<uint32_t>(__cvta_generic_to_shared(exo_smem + 408)) "
            "+ 8u * (exo_slot), (exo_syncState.empty_parity >> exo_slot) & 1u);") in producer
    assert "exo_syncState.empty_parity ^= 1u << exo_slot;" in producer
    assert "exo_syncState.empty_awaitIdx = (exo_slot + 1u) % 3u;" in producer
    wait, write = producer.index("exo_mbarrierWait("), producer.index("buf[(k % 3) * 32")
    arrive = producer.index(ARRIVE)
    assert wait < write < arrive
    assert ('"r"(static_cast<uint32_t>(__cvta_generic_to_shared(exo_smem + 384)) + 8u * '
            '(exo_syncState.full_arriveIdx))') in producer
    assert "exo_syncState.full_arriveIdx = (exo_syncState.full_arriveIdx + 1u) % 3u;" in producer
    # consumer: Await(full, ~0) never skips
    assert "full_skips" not in consumer
    assert consumer.index("exo_syncState.full_awaitIdx") < consumer.index("y[") < \
        consumer.index("exo_syncState.empty_arriveIdx")
    assert "fence.proxy.async" not in task  # cuda_in_order / cuda_temporal grant no async


@pytest.mark.rule("SEM-8.5")
def test_wait_helper_try_wait_and_test_wait() -> None:
    text = emit_cuda(*example("ws_ring"))
    helper = _between(text, "#ifndef EXO_MBARRIER_WAIT", "\n}\n#endif")
    assert "#if __CUDA_ARCH__ >= 900" in helper
    assert "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 exo_p, [%1], %2;" in helper
    assert "mbarrier.test_wait.parity.shared::cta.b64 exo_p, [%1], %2;" in helper
    assert helper.index("mbarrier.try_wait") < helper.index("#else") < \
        helper.index("mbarrier.test_wait")
    assert "} while (!exo_done);" in helper
    assert text.index("#ifndef EXO_MBARRIER_WAIT") < text.index("struct exo_Cuda0_ws_ring")
    assert "EXO_MBARRIER_WAIT" not in emit_cuda(*example("saxpy"))


@pytest.mark.rule("SEM-8.5")
@pytest.mark.rule("LANG-5.19")
@pytest.mark.parametrize(("name", "depth", "lag"), [
    ("s7_ws_ring", 3, 3), ("s7b_producer_lag_minus_one", 2, 2), ("l3_relay", 2, 2)])
def test_guard_cycle_depth(name: str, depth: int, lag: int) -> None:
    # depth = sum of the lags over the guard cycle {full, empty}; only empty's Await skips
    text = emit_cuda(*example(name))
    assert f"// full: 1 x ring of depth {depth} at" in text
    assert f"// empty: 1 x ring of depth {depth} at" in text
    assert f"exo_syncState.full_arriveIdx = (exo_syncState.full_arriveIdx + 1u) % {depth}u;" \
        in text
    assert f"if (exo_syncState.empty_skips < {lag}u) {{" in text
    assert "full_skips" not in text


@pytest.mark.rule("SEM-8.5")
@pytest.mark.rule("COLL-4.6")
def test_named_warps_share_the_state() -> None:
    text = emit_cuda(*example("l3_relay"))
    prod = _task(text, "exo_deviceTask_prod")
    cons = _task(text, "exo_deviceTask_cons")
    assert "empty_skips" in prod and ARRIVE in prod and "full_awaitIdx" not in prod
    assert "full_awaitIdx" in cons and "empty_arriveIdx" in cons and "empty_skips" not in cons
    main = _between(text, "void exo_deviceMainLoop(", "\n    }\n")
    assert main.count("exo_SyncState exo_syncState;") == 1
    assert main.index("exo_SyncState exo_syncState;") < main.index("if (int exo_tmp")
    assert "exo_deviceTask_prod(exo_smem, exo_deviceArgs, exo_task, exo_syncState);" in main
    assert "exo_deviceTask_cons(exo_smem, exo_deviceArgs, exo_task, exo_syncState);" in main


@pytest.mark.rule("SEM-8.5")
@pytest.mark.rule("LANG-5.19")
def test_self_guarded_depth_is_one_plus_lag() -> None:
    text = emit_cuda(*local("mbarrier_self_lag"))  # Await(bar, ~1) then Arrive >> bar
    assert "// bar: 1 x ring of depth 2 at exo_smem + 256, arrival count 32" in text
    task = _task(text)
    assert "if (exo_syncState.bar_skips < 1u) {" in task
    assert "exo_syncState.bar_awaitIdx = (exo_slot + 1u) % 2u;" in task
    assert task.index("exo_mbarrierWait(") < task.index(ARRIVE)
    text = emit_cuda(*local("cp_async_mbarrier"))  # lag 0: a ring of one mbarrier
    assert "// bar: 1 x ring of depth 1 at" in text
    assert "exo_syncState.bar_arriveIdx = (exo_syncState.bar_arriveIdx + 1u) % 1u;" in text


@pytest.mark.rule("SEM-8.5")
def test_cp_async_arrive_is_noinc() -> None:
    text = emit_cuda(*local("cp_async_mbarrier"))
    task = _task(text)
    copy = task.index("cp.async.ca.shared.global") if "cp.async.ca" in task else \
        task.index("cp.async.cg.shared.global")
    arrive = task.index('asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];"')
    wait = task.index("exo_mbarrierWait(")
    assert copy < arrive < wait
    assert ARRIVE not in task and "cp.async.commit_group" not in task
    # noinc: the 32 asynchronous arrivals count against the init count
    assert '"r"(32u)' in _setup(text)


@pytest.mark.rule("SEM-8.5")
@pytest.mark.rule("COLL-5.9")
def test_distributed_barrier_array() -> None:
    # full, empty: barrier[2], one element per warp pair; depth 0 + 2 = 2, 2 slices each
    text = emit_cuda(*local("mbarrier_pair_rings"))
    setup = _setup(text)
    assert "// full: 2 x ring of depth 2 at exo_smem + 512, arrival count 32" in setup
    assert "// empty: 2 x ring of depth 2 at exo_smem + 544, arrival count 32" in setup
    assert setup.count("for (uint32_t exo_i = 0; exo_i < 4u; exo_i++) {") == 2
    task = _task(text)
    # element w of a ring of depth 2 starts at slot 2 * w
    assert "+ 8u * (exo_32thr_w * 2 + exo_syncState.full_arriveIdx)" in task
    assert "+ 8u * (exo_32thr_w * 2 + exo_slot), (exo_syncState.empty_parity" in task
    assert "// Arrive(cuda_in_order) >> full[w]" in task
    assert "// Await(empty[w], cuda_in_order, ~2)" in task
    assert re.search(r"exo_smemBytes = 576;", text)


@pytest.mark.rule("SEM-8.5")
@pytest.mark.rule("SEM-8.7")
def test_proxy_fences() -> None:
    # ws_ring with the consumer's Await(full, cuda_generic_and_async_proxy, ~0): the consumer
    # fences after its wait (τ1 = cuda_in_order has F ≠ ∅), and setup fences after the init.
    text = emit_cuda(*local("ws_ring_proxy"))
    setup = _setup(text)
    assert setup.index(INIT) < setup.index('asm volatile("fence.proxy.async;" ::: "memory");') \
        < setup.index("barrier.cta.sync 0;")
    task = _task(text)
    consumer = task[task.index("// Await(full, cuda_generic_and_async_proxy, ~0)"):]
    assert consumer.index("exo_syncState.full_awaitIdx = (exo_slot + 1u) % 3u;") < \
        consumer.index('asm volatile("fence.proxy.async;" ::: "memory");') < consumer.index("y[")
    assert task.count("fence.proxy.async") == 1  # Await(empty, cuda_temporal): no async grant
    # the fence needs sm_90; below it there is no async proxy to fence
    assert '#if __CUDA_ARCH__ >= 900\n                    asm volatile("fence.proxy.async;"' \
        in consumer


@pytest.mark.rule("SEM-8.5")
@pytest.mark.rule("COLL-5.11")
def test_allocation_in_thread_loop_has_one_slice_per_iteration() -> None:
    # bar is allocated inside `for w in cuda_threads(0, 4, unit=cuda_warp)`: 4 slices, slice w
    # arrived on and awaited by warp w only (count 32 each), ring depth 1.
    text = emit_cuda(*local("mbarrier_warp_slices"))
    setup = _setup(text)
    assert "// bar: 4 x ring of depth 1 at exo_smem + 512, arrival count 32" in setup
    assert "// slice index (mixed radix, last fastest): w < 4" in setup
    assert setup.count("for (uint32_t exo_i = 0; exo_i < 4u; exo_i++) {") == 1
    assert setup.count(INIT) == 1 and '"r"(32u)' in setup
    assert "exo_smemBytes = 544;" in text  # buf: 512 bytes, then 4 x 8 bytes of mbarriers
    task = _task(text)
    assert "// bar: barrier @ CudaMbarrier: 4 x ring of depth 1 at exo_smem + 512" in task
    # the slot address uses the slice index (the warp's guard variable), then the ring slot
    arrive = "+ 8u * (exo_32thr_w + exo_syncState.bar_arriveIdx)) : \"memory\");"
    assert task.count(arrive) == 2
    assert task.count("+ 8u * (exo_32thr_w + exo_slot), (exo_syncState.bar_parity") == 2
    assert task.index("if ([[maybe_unused]] int exo_32thr_w = ") < task.index(ARRIVE)


@pytest.mark.rule("SEM-8.5")
@pytest.mark.rule("COLL-5.11")
def test_slice_index_is_explicit_indices_then_enclosing_iterators() -> None:
    # bar: barrier[2] allocated inside the warp loop w, indexed by the half-warp iterator h:
    # slice = h * 2 + w (explicit index first, last digit fastest), 16 threads per slice.
    text = emit_cuda(*local("mbarrier_mixed_slices"))
    setup = _setup(text)
    assert "// bar: 4 x ring of depth 1 at exo_smem + 256, arrival count 16" in setup
    assert "// slice index (mixed radix, last fastest): h < 2, w < 2" in setup
    assert "for (uint32_t exo_i = 0; exo_i < 4u; exo_i++) {" in setup
    task = _task(text)
    assert "+ 8u * (exo_16thr_h * 2 + exo_32thr_w + exo_syncState.bar_arriveIdx))" in task
    assert "+ 8u * (exo_16thr_h * 2 + exo_32thr_w + exo_slot), (exo_syncState" in task


@pytest.mark.rule("SEM-8.5")
@pytest.mark.rule("COLL-5.11")
def test_init_per_slice_arrival_count() -> None:
    # each slice is initialised with its own collective's size: one loop per run of equal counts
    bar, w = ir.Sym.fresh("bar"), ir.Sym.fresh("w")
    digits = (mbarrier.SliceDigit("i", None, 2), mbarrier.SliceDigit("w", w, 2))
    ring = mbarrier.MbarrierRing(bar, digits, 3, 2, (32, 32, 64, 32), 128, False)
    lines = "\n".join(mbarrier_text.setup_lines({bar: ring}, False))
    assert "// bar: 4 x ring of depth 3 at exo_smem + 128, arrival counts [32, 32, 64, 32]" \
        in lines
    assert lines.count(INIT) == 3
    assert 'exo_i < 6u; exo_i++) {\n        ' in lines and '"r"(32u)' in lines
    assert "for (uint32_t exo_i = 6u; exo_i < 9u; exo_i++) {" in lines
    assert "for (uint32_t exo_i = 9u; exo_i < 12u; exo_i++) {" in lines
    assert lines.index('"r"(64u)') < lines.index("exo_i = 9u")


def _cta_axis() -> tuple:
    """The tiling of `for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster)` (blockDim 32,
    clusterDim 2) and the distribution of an unindexed barrier allocated inside it."""
    dev = CudaDeviceFunction(blockDim=32, clusterDim=2)
    c = ir.Sym.fresh("c")
    tiling = collectives.tile_threads(collectives.top_tiling(dev), c, "c", 0, 2,
                                      cuda_cta_in_cluster, dev)
    return tiling, collectives.deduce_distribution(tiling, None, [], [], dev, name="bar"), dev


@pytest.mark.rule("COLL-5.11")
def test_cta_in_cluster_axis_is_not_a_slice_digit() -> None:
    # a slice iterator with thread pitch >= blockDim is a CTA-in-cluster axis: every CTA holds
    # its own copy, so it is a CTA digit (rank stride pitch / blockDim), not a slice digit
    tiling, dist, dev = _cta_axis()
    local, ctas = mbarrier.slice_digits("bar", tiling, dist, dev)
    assert local == ()
    assert [(d.name, d.extent, d.stride) for d in ctas] == [("c", 2, 1)]


@pytest.mark.rule("COLL-5.11")
def test_cta_axis_wider_than_the_cluster_is_unsupported() -> None:
    # a CTA-in-cluster digit must stay inside one cluster (remote arrives go through mapa)
    tiling, dist, _ = _cta_axis()
    with pytest.raises(Unsupported, match="not a CTA-in-cluster axis") as err:
        mbarrier.slice_digits("bar", tiling, dist, CudaDeviceFunction(blockDim=32, clusterDim=1))
    assert err.value.code == "ERR-V11" and err.value.rule == "COLL-5.11"
