"""CUDA of endgame's TMA instrs (specs/codegen.md TMA-CG-1, TMA-CG-2): `Sm90_tma_load_2d` with a
trailing element of a ring mbarrier posts the box's bytes of its own element type on that
element's slot and completes there; a TMA store of rank 3 in a linear map; a TMA whose issuing
threads do not then arrive on its element is refused. tk_tma_gemm (tests/programs_tk) is
proved first; the others are certified by hand (the lowering is what is tested)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from codegen_support import example, hand_certified

from verifier.codegen import emit_cuda
from verifier.diagnostics import Unsupported

STORE = '''from verifier.lang import *


@proc
def eg_tma_store(C: f32[4, 64, 32] @ CudaGmemLinear):
    C_map = C[:, :, :] @ Sm90_tensorMap(0, 2, 64, 32)
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, 2):
            C_s: f32[2, 64, 32] @ CudaSmemLinear
            for t in cuda_threads(0, 128):
                for j in seq(0, 32):
                    C_s[t / 64, t % 64, j] = 0.0
            Fence(cuda_in_order, cuda_generic_and_async_proxy)
            with CudaWarps(0, 1):
                Sm90_tma_store_3d(C_map[2 * task:2 * task + 2, :, :], C_s[:, :, :], size0=2,
                                  size1=64, size2=32, smem_box=None, dst=f32, src=f32,
                                  swizzle=0)
                tcg: barrier @ Sm90_TmaCommitGroup
                Arrive(tma_to_gmem_async) >> tcg
                Await(tcg, cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
'''


@pytest.mark.rule("TMA-CG-1")
@pytest.mark.rule("TMA-CG-2")
def test_ring_trailing_tma_posts_bf16_bytes_on_the_elements_slot() -> None:
    text = emit_cuda(*example("tk_tma_gemm"))
    slot = re.escape("static_cast<uint32_t>(__cvta_generic_to_shared(exo_smem + ") + \
        r"(\d+)" + re.escape(")) + 8u * ((static_cast<uint32_t>((k) - 0) % 2u))")
    loads = re.findall(r"exo_Sm90_tmaLoad<2>\(\((\w+) \+ \(k % 2\) \* (\d+)\), "
                       r"&exo_deviceArgs\.(\w+), \{static_cast<int32_t>\(\(64 \* k\)\), "
                       r"static_cast<int32_t>\(0\)\}, " + slot + r", (\d+)u\);", text)
    # 64 x 64 and 256 x 64 bf16 boxes: 2 bytes an element
    assert [(a, s, m, b) for a, s, m, _, b in loads] == [
        ("A_s", "4096", "A_map", "8192"), ("B_s", "16384", "B_map", "32768")]
    full = loads[0][3]
    assert loads[1][3] == full
    # the producer's own Arrive completes on the same slot, after the copies
    arrive = text.index("// Arrive(cuda_in_order) >> full[k]")
    assert text.index("exo_Sm90_tmaLoad<2>((B_s") < arrive
    assert f"__cvta_generic_to_shared(exo_smem + {full})) + 8u * ((static_cast<uint32_t>((k) - " \
        "0) % 2u))) : \"memory\");" in text[arrive:arrive + 400]
    assert "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16" in text and "CU_TENSOR_MAP_SWIZZLE_128B" in text


@pytest.mark.rule("TMA-CG-2")
@pytest.mark.rule("COLL-5.12")
def test_cluster_multicast_completes_on_every_ctas_ring_element() -> None:
    text = emit_cuda(*example("tk_tma_gemm_cluster"))
    # CTA exo_cta loads rows [128 exo_cta, +128) of the 256 x 64 bf16 B tile into both CTAs and
    # expects the whole tile's bytes on its own slot of `full[., k]`
    assert "const uint16_t exo_ctaMask = static_cast<uint16_t>(3u << (blockIdx.x % 2u - " \
        "exo_cta * 1u));" in text
    multicast = re.search(r"exo_Sm90_tmaLoadMulticast<2>\(\(B_s \+ \(k % 2\) \* 16384\) \+ "
                          r"exo_cta \* 8192, &exo_deviceArgs\.B_map, \{static_cast<int32_t>"
                          r"\(\(64 \* k\)\), static_cast<int32_t>\(0 \+ exo_cta \* 128\)\}, "
                          r"(.*?), 32768u, exo_ctaMask\);", text)
    assert multicast is not None
    load_a = re.search(r"exo_Sm90_tmaLoad<2>\(\(A_s \+ \(k % 2\) \* 4096\), .*?\}, (.*?), "
                       r"8192u\);", text)
    assert load_a is not None and load_a[1] == multicast[1]  # one slot: full[own CTA, k]
    # each producer then arrives on `full` here and in the peer (count 2 x 32)
    assert "exo_mbarrierArriveRemote(exo_bar, exo_rank ^ 1u);" in text
    assert '"r"(64u) : "memory");' in text


@pytest.mark.rule("TMA-CG-1")
def test_rank3_store_with_the_swizzle_keyword(tmp_path: Path) -> None:
    path = tmp_path / "eg_tma_store.py"
    path.write_text(STORE)
    text = emit_cuda(*hand_certified(path, "eg_tma_store"))
    assert "exo_Sm90_tmaStore<3, false>(&exo_deviceArgs.C_map, {static_cast<int32_t>(0), " \
        "static_cast<int32_t>(0), static_cast<int32_t>((2 * exo_task.task))}, C_s);" in text
    assert "CU_TENSOR_MAP_SWIZZLE_NONE" in text


@pytest.mark.rule("TMA-CG-2")
def test_tma_whose_threads_arrive_first_is_refused(tmp_path: Path) -> None:
    source = Path(example("tk_tma_gemm")[0].loc.file).read_text()
    copies = re.search(r"( +Sm90_tma_load_2d\(A_s.*?src=bf16\) >> full\[k\]\n)"
                       r"( +Sm90_tma_load_2d\(B_s.*?src=bf16\) >> full\[k\]\n)"
                       r"( +Arrive\(cuda_in_order\) >> full\[k\]\n)", source, re.S)
    assert copies is not None
    swapped = source.replace(copies[0], copies[3] + copies[1] + copies[2])
    path = tmp_path / "tk_tma_gemm_arrive_first.py"
    path.write_text(swapped)
    with pytest.raises(Unsupported, match="do not then arrive on the same element") as err:
        emit_cuda(*hand_certified(path, "tk_tma_gemm"))
    assert err.value.code == "ERR-V11"
