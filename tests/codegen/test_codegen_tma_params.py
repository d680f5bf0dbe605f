"""CUDA of a CPU proc calling a GPU proc (CG-C1) and of a tensor-map parameter (CG-T1):
tests/programs_endgame/tma_tester.py, upstream endgame's test_tma.py at a smaller tile. The
caller lowers as the program its proof read, the callee inlined, so its TMA store goes through
the caller's map at the caller's window; the callee alone takes the caller's `CUtensorMap` and
the window's offsets. Both are proved first (the certificate is real), and nvcc builds them
(test_codegen_nvcc.py compiles every proved kernel; here, the text).
With $SPORK_UPSTREAM_CHECKOUT naming an endgame checkout, upstream's own `tma_tester` procs
(four swizzles, 248-row boxes) are proved, lowered and built too (`-m slow`)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from codegen_support import example, hand_certified
from test_codegen_nvcc import NVCC

from verifier.cli import main
from verifier.codegen import emit_cuda
from verifier.codegen.targets import NVCC_FLAGS
from verifier.diagnostics import Unsupported
from verifier.encode import Options, verify_proc
from verifier.lang.rewrite.inline import inline_calls, inlined_callees
from verifier.lang.ir import ir
from verifier.load.load import load_procs
from verifier.results import Verdict

COORDS = r"\{static_cast<int32_t>\((.*?)\), static_cast<int32_t>\((.*?)\)\}"


def _host(text: str, name: str) -> str:
    return text[text.index(f'extern "C" void {name}('):]


@pytest.mark.rule("CG-T1")
def test_tensor_map_parameter_is_the_callers_map_at_its_offsets() -> None:
    text = emit_cuda(*example("tma_tester_gpu"))
    host = _host(text, "tma_tester_gpu")
    assert host.startswith('extern "C" void tma_tester_gpu(cudaStream_t exo_cudaStream, '
                           "struct exo_tensorMapWindow2 sum_map, struct exo_win_2f32 d_x, "
                           "float* d_y)")
    assert "struct exo_tensorMapWindow2\n{\n    CUtensorMap map;\n    int32_t offsets[2];\n};" \
        in text
    # the descriptor and both offsets travel to the kernel by value (__grid_constant__)
    for line in ("exo_args.sum_map = sum_map.map;",
                 "exo_args.exo_offset0_sum_map = sum_map.offsets[0];",
                 "exo_args.exo_offset1_sum_map = sum_map.offsets[1];"):
        assert line in host
    assert "CUtensorMap sum_map;" in text and "int32_t exo_offset1_sum_map;" in text
    # the store's coordinates, innermost first, start at the window's offsets
    store = re.search(r"exo_Sm90_tmaStore<2, false>\(&exo_deviceArgs\.sum_map, " + COORDS +
                      r", smem_sum\);", text)
    assert store is not None
    assert store[1] == "exo_deviceArgs.exo_offset1_sum_map + (exo_task.task_k * 32)"
    assert store[2] == "exo_deviceArgs.exo_offset0_sum_map + (exo_task.task_m * 24)"
    # the callee's own map over its window parameter is encoded here, at the window's strides
    assert "x_map = exo_encodeTensorMap(CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, d_x.data" in host
    # a stride of the map parameter cannot be read: the assert is a comment, not an assumption
    assert "// assert (stride(sum_map, 1) == 1): a stride of a tensor-map parameter" in host
    assert "sum_map.strides" not in text


@pytest.mark.rule("CG-C1")
@pytest.mark.rule("CG-T1")
def test_callers_call_is_inlined_through_its_own_map() -> None:
    text = emit_cuda(*example("tma_tester"))
    host = _host(text, "tma_tester")
    assert "tma_tester_gpu" not in text  # no call: the callee's body, as the proof read it
    assert host.startswith('extern "C" void tma_tester(cudaStream_t exo_cudaStream, '
                           "float* h_sum, float* h_x, float* h_y)")
    # sum_map over all of d_sum (1 + M rows); the window sum_map[1:, :] is the callee's
    assert re.search(r"exo_dims\[2\] = \{static_cast<cuuint64_t>\(64\), "
                     r"static_cast<cuuint64_t>\(\(1 \+ 48\)\)\};", host)
    store = re.search(r"exo_Sm90_tmaStore<2, false>\(&exo_deviceArgs\.sum_map, " + COORDS,
                      text)
    assert store is not None and store[2] == "(1 + (exo_task.task_m * 24))"
    assert "exo_offset" not in text
    # x_map over the caller's d_x[:, 0:K]: K columns at the row stride K + 64
    assert re.search(r"exo_dims\[2\] = \{static_cast<cuuint64_t>\(64\), "
                     r"static_cast<cuuint64_t>\(48\)\};\n.*exo_strides\[1\] = "
                     r"\{static_cast<cuuint64_t>\(\(sizeof\(float\)\) \* \(64 \+ 64\)\)\};",
                     host)
    # host copies in, the launch, the copy out, in program order
    order = [host.index(x) for x in ("cudaMemcpyHostToDevice", "sum_map = exo_encodeTensorMap",
                                     "exo_launch0_tma_tester(", "cudaMemcpyDeviceToHost")]
    assert order == sorted(order)


@pytest.mark.rule("CG-C1")
def test_inlined_window_takes_the_arguments_map() -> None:
    proc = example("tma_tester")[0]
    (callee,) = inlined_callees(proc)
    param = next(a.name for a in callee.args if a.name.name == "sum_map")
    maps: list[tuple[ir.Sym, ir.Sym]] = []

    def walk(node: object) -> None:
        if isinstance(node, ir.Window) and node.tensor_map is not None:
            maps.append((node.buf, node.tensor_map[0]))
        if isinstance(node, tuple):
            for x in node:
                walk(x)
        elif hasattr(node, "__dataclass_fields__") and not isinstance(node, ir.Proc):
            for f in node.__dataclass_fields__:
                walk(getattr(node, f))
    walk(inline_calls(proc).body)
    assert maps and param not in {m for _, m in maps}
    assert {(b.name, m.name) for b, m in maps} >= {("d_sum", "sum_map"), ("d_x", "x_map")}


def test_refuted_callee_emits_nothing(tmp_path: Path) -> None:
    # a caller is proved only when its callees are (CALL-2); certified code needs that proof
    from verifier.cli import main

    src = Path(__file__).resolve().parents[1] / "programs_endgame" / "tma_tester_bug_proxy_fence.py"
    code = main([str(src), "--emit-cuda", str(tmp_path), "--no-progress"])
    assert code != 0
    assert list(tmp_path.glob("*.cu")) == []


UPSTREAM = os.environ.get("SPORK_UPSTREAM_CHECKOUT", "")


@pytest.mark.slow
@pytest.mark.nvcc
@pytest.mark.rule("CG-C1")
@pytest.mark.rule("CG-T1")
@pytest.mark.skipif(not UPSTREAM or NVCC is None,
                    reason="needs $SPORK_UPSTREAM_CHECKOUT (upstream endgame) and nvcc")
def test_upstream_tma_testers_lower_and_build(tmp_path: Path) -> None:
    from verifier.load.upstream_modules import upstream_aliases

    path = Path(UPSTREAM, "tests", "cuda", "test_tma.py")
    with upstream_aliases():
        spec = importlib.util.spec_from_file_location("upstream_test_tma", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        callers = [module.mkproc_tma_tester(sw, False) for sw in (0, 32, 64, 128)]
    built = []
    for caller in callers:
        for proc in (*inlined_callees(caller), caller):
            result = verify_proc(proc, Options(releases=True))
            assert result.verdict is Verdict.proved, (proc.name, result.findings)
            cu = tmp_path / f"{proc.name}.cu"
            cu.write_text(emit_cuda(proc, result.certificate))
            built.append(cu)
    assert len(built) == 8
    unit = tmp_path / "all.cu"  # one translation unit: the four swizzles do not clash
    unit.write_text("".join(f'#include "{f.name}"\n' for f in built))
    run = subprocess.run([str(NVCC), *NVCC_FLAGS["sm_90a"], "-c", str(unit), "-o",
                          str(tmp_path / "all.o")], capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]


@pytest.mark.rule("DIAL-18")
@pytest.mark.rule("TMA-CG-2")
def test_tma_data_ring_lowers_slots_waits_and_arrives_in_order() -> None:
    # tests/programs_endgame/tma_data_ring.py: k-tile k of A_s / B_s lives in slot k % 2; the
    # producer waits for empty[k] (its first 2 k-tiles free), loads by TMA completing on
    # full[k] and arrives there; the consumer waits on full[k], runs the wgmma, waits for its
    # commit group and releases the slot on empty[k + 2]. (nvcc with ThunderKittens' headers
    # builds it: test_codegen_tk_wgmma.py.)
    text = emit_cuda(*example("tma_data_ring"))
    producer = text[text.index("// Await(empty[k], cuda_temporal, 0)"):]
    producer = producer[:producer.index("// CudaWarps(name='consumer')")]
    assert re.search(r"if \(\(k\) >= 2\) \{\n\s+const uint32_t exo_y = static_cast<uint32_t>"
                     r"\(\(k\) - 2\);\n\s+exo_mbarrierWait\(", producer)
    loads = re.findall(r"exo_Sm90_tmaLoad<2>\(\((\w+) \+ \(k % 2\) \* (\d+)\), "
                       r"&exo_deviceArgs\.(\w+), .*?, (\d+)u\);", producer)
    assert loads == [("A_s", "4096", "A_map", "8192"), ("B_s", "16384", "B_map", "32768")]
    assert producer.index("exo_mbarrierWait(") < producer.index("exo_Sm90_tmaLoad<2>") < \
        producer.index("// Arrive(cuda_in_order) >> full[k]") < \
        producer.index("mbarrier.arrive.shared::cta.b64")
    consumer = text[text.index("// Await(full[k], cuda_generic_and_async_proxy, 0)"):]
    marks = ["exo_mbarrierWait(", "fence.proxy.async;",
             "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
             "wgmma.commit_group.sync.aligned;", "wgmma.wait_group.sync.aligned 0;",
             "// Arrive(cuda_in_order) >> empty[(k + 2)]", "mbarrier.arrive.shared::cta.b64"]
    at = [consumer.index(m) for m in marks]
    assert at == sorted(at)
    assert consumer.count("wgmma.mma_async.sync.aligned.m64n256k16") == 4


@pytest.mark.rule("CALL-3", "CG-T1", "LANG-3.4")
@pytest.mark.parametrize("actual, have", [
    ("d_sum[1:, :]", "CudaGmemLinear"),  # a plain GMEM window: no CUtensorMap to pass
    ("d_sum[1:, :] @ Sm90_tensorMap(64, smem_M, smem_K)", "Sm90_tensorMap(64, 24, 32)")])
def test_map_parameter_passed_another_window_is_rejected(tmp_path: Path, actual: str,
                                                          have: str) -> None:
    """As upstream's memory check at a call (TypeError "expected `x` argument in
    Sm90_tensorMap(...) but got an argument in CudaGmemLinear"): rejected at the call's
    argument, before any proof (it was proved, then refused by the lowering)."""
    src = Path(__file__).resolve().parents[1] / "programs_endgame" / "tma_tester.py"
    call = "    tma_tester_gpu(sum_window[:, :], d_x[:, 0:K], d_y)\n"
    text = src.read_text()
    assert call in text
    if "@" in actual:
        text = text.replace(call, f"    other = {actual}\n" + call.replace(
            "sum_window[:, :]", "other[:, :]"))
    else:
        text = text.replace(call, call.replace("sum_window[:, :]", actual))
    path = tmp_path / "other_window.py"
    path.write_text(text)
    line = text[:text.index("tma_tester_gpu(", text.index("def tma_tester("))].count("\n") + 1
    out = tmp_path / "out.json"
    assert main([str(path), "--no-progress", "--format", "json", "--output", str(out)]) == 2
    results = {r["proc"]: r for r in json.loads(out.read_text())["results"]}
    assert results["tma_tester_gpu"]["verdict"] == "proved"
    (finding,) = results["tma_tester"]["findings"]
    assert results["tma_tester"]["verdict"] == "rejected" and finding["code"] == "ERR-A07"
    assert (finding["location"]["line"], finding["location"]["col"]) == (line, 20)
    assert finding["message"].startswith(
        f"expected `sum_map` argument of tma_tester_gpu in Sm90_tensorMap(128, 24, 32) but got "
        f"an argument in {have}")


@pytest.mark.rule("CG-T1")
def test_map_parameter_read_as_data_is_refused(tmp_path: Path) -> None:
    # the parameter's data pointer is inside the caller's CUtensorMap: only TMAs go through it
    # (certified by hand: the lowering's refusal is what is tested)
    src = Path(__file__).resolve().parents[1] / "programs_endgame" / "tma_tester.py"
    text = src.read_text()
    anchor = "                Await(raw[0], cuda_in_order, 0)\n"
    assert anchor in text
    text = text.replace(anchor, anchor + "                for m in cuda_threads(0, smem_M):\n"
                        "                    smem_y[m, 0] = sum_map[m, 0]\n")
    path = tmp_path / "map_read.py"
    path.write_text(text)
    with pytest.raises(Unsupported) as err:
        emit_cuda(*hand_certified(path, "tma_tester_gpu"))
    assert err.value.code == "ERR-V11"
    assert "an element access of the tensor-map parameter sum_map" in str(err.value)


@pytest.mark.rule("CG-I2")
def test_packed_copies_lower_element_by_element() -> None:
    text = emit_cuda(*example("packed_vec_add"))
    task = "((512 * exo_task.task) + (2 * exo_1thr_tid))"
    for reg, buf in (("rx", "x"), ("ry", "y")):
        for k in (0, 1):
            assert f"{reg}[{k}] = (exo_deviceArgs.{buf} + {task})[{k}];" in text
    assert text.index("rx[1] = (exo_deviceArgs.x") < text.index("+= ry[") < \
        text.index(f"(exo_deviceArgs.out + {task})[0] = rx[0];")
    # the v=4 16-bit vector store: registers [4, 2] flattened, one element each, in order
    stores = re.findall(r"\(exo_deviceArgs\.out8 \+ \(8 \* exo_1thr_tid\)\)\[(\d)\] = r8\[(\d)\];",
                        text)
    assert stores == [(str(k), str(k)) for k in range(8)]
    assert "uint32_t*" not in text  # no wide access: its alignment is not proved


@pytest.mark.rule("CG-I1")
def test_endgame_pair_shuffle_sums_over_the_lane_pair() -> None:
    text = emit_cuda(*example("pair_sum"))
    assert "total = part + __shfl_xor_sync(((3u) << (threadIdx.x & 30u)), part, 1);" in text
