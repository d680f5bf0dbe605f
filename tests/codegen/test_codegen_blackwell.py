"""Blackwell (sm_100a) code generation (specs/blackwell.md "Code generation", BW-CG-*).

Every proved proc of tests/programs_blackwell emits CUDA whose tcgen05 text follows the rules,
and nvcc 13 compiles it for sm_100a (`-arch=compute_100a -code=sm_100a,compute_100a`, so ptxas
checks the inline PTX); a refuted proc emits nothing; what the lowering cannot keep exact is
refused with its rule and line. No GPU here: the kernels are compiled, never run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from codegen_support import certified, local
from conftest import ROOT, default_first, expectations
from test_codegen_nvcc import NVCC, compile_together, file_target

from verifier.cli import main
from verifier.codegen import emit_cuda
from verifier.codegen.sm100_rows import SM100_ROWS
from verifier.codegen.targets import NVCC_FLAGS
from verifier.diagnostics import Unsupported
from verifier.lang.ir.printer import ir_hash
from verifier.load.load import load_procs
from verifier.results import Certificate

PROGRAMS = ROOT / "tests" / "programs_blackwell"
GEMM = PROGRAMS / "bw_gemm.py"
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not found")


def _cases(verdict: str) -> list[tuple[Path, str]]:
    return [(e.file, e.proc) for f in sorted(PROGRAMS.glob("*.py")) for e in expectations(f)
            if e.verdict == verdict]


def _emitted(path: Path, name: str) -> str:
    return emit_cuda(*certified(path, name))


def _hand(source: str, tmp_path: Path, name: str = "bw_gemm") -> str:
    """Emit an edited bw_gemm with a hand-made certificate (the refusal does not depend on
    the proof)."""
    path = tmp_path / f"{name}_edited.py"
    path.write_text(source)
    (proc,) = [p for p in load_procs(path) if p.name == name]
    return emit_cuda(proc, Certificate(proc.name, ir_hash(proc), (), "hand-made", "0"))


@pytest.mark.rule("BW-CG-1")
@pytest.mark.parametrize("case", default_first([(c,) for c in _cases("proved")], keep=2,
                                              ids=lambda r: r[0][1]))
def test_every_proved_proc_emits_for_sm100a(case: tuple[Path, str]) -> None:
    text = _emitted(*case)
    assert file_target(text) == "sm_100a"
    assert "#if defined(__CUDA_ARCH__) && !(defined(__CUDA_ARCH_FEAT_SM100_ALL))" in text
    assert re.search(r"tcgen05\.alloc\.cta_group::[12]\.sync\.aligned\.shared::cta\.b32", text)
    assert re.search(r"tcgen05\.dealloc\.cta_group::[12]\.sync\.aligned\.b32", text)
    assert _emitted(*case) == text  # deterministic


@pytest.mark.rule("BW-CG-2")
@pytest.mark.rule("BW-CG-3")
@pytest.mark.rule("BW-CG-4")
@pytest.mark.rule("BW-CG-5")
@pytest.mark.rule("BW-CG-6")
@pytest.mark.rule("BW-CG-7")
def test_gemm_text() -> None:
    text = _emitted(GEMM, "bw_gemm")
    task = text[text.index("void exo_deviceTask("):]
    # BW-CG-2: the TMEM address lives in a 16-byte SMEM slot after A_s and B_s
    assert "uint32_t* const D = reinterpret_cast<uint32_t*>(exo_smem + 6144);" in task
    assert '"r"(static_cast<uint32_t>(__cvta_generic_to_shared(D))), "r"(64u)' in task
    assert '"r"(D[0]), "r"(64u)' in task
    assert "relinquish_alloc_permit: not emitted" in task
    # BW-CG-3: M = 128, N = 64, tf32, K-major, 32-byte swizzle (mode 6, 8 rows x 32 bytes)
    assert "exo_Sm100_mma_tf32_cta1(D[0], exo_Sm100_smemDesc(A_s, 256u, 6u)," in task
    assert "exo_Sm100_smemDesc(B_s, 256u, 6u), 0x8100910u, 1u);" in task
    assert "tcgen05.mma.cta_group::1.kind::tf32 [%0], %1, " in text
    # BW-CG-4: one commit per Arrive(tcgen05_commit), then the ring advances
    commits = re.findall(r"tcgen05\.commit\.cta_group::1\.mbarrier::arrive::one\."
                         r"shared::cluster\.b64 \[%0\];\" :: \"r\"\([^\n]*\n\s*(\S+)", task)
    assert commits == ["exo_syncState.war_arriveIdx", "exo_syncState.done_arriveIdx"]
    # BW-CG-7: the wait on `done` and both CTA syncs end in tcgen05.fence::after_thread_sync
    assert task.count('asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");') == 3
    after_done = task[task.index("// Await(done"):]
    assert after_done.index("exo_mbarrierWait(") < after_done.index("tcgen05.fence::after")
    # BW-CG-5, BW-CG-6: each warp loads its lane quarter; the wait pins the 64 registers
    ld = task.index("exo_Sm100_tmemLd32x32b_x64(Dr, D[0]);")
    wait = task.index('asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");')
    pin = task.index("exo_Sm100_pinRegs<64>(Dr);")
    store = task.index("exo_Sm100_storeRow<64>(")
    assert ld < wait < pin < store
    assert "(32u * ((threadIdx.x / 32u) % 4u)) << 16" in text


@pytest.mark.rule("BW-CG-4")
@pytest.mark.rule("BW-CG-9")
def test_pair_gemm_text() -> None:
    """cta_group::2: both CTAs' warp 0 allocate; the leader's thread issues the M = 256 MMA on
    its own slices; the final commit reaches both CTAs (one arrival each)."""
    text = _emitted(PROGRAMS / "bw_gemm_cta2.py", "bw_gemm_cta2")
    task = text[text.index("void exo_deviceTask("):]
    assert "tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32" in task
    assert "tcgen05.dealloc.cta_group::2.sync.aligned.b32" in task
    assert "cta_group::1" not in text
    mma = task.index("exo_Sm100_mma_tf32_cta2(D[0], exo_Sm100_smemDesc(A_s, 256u, 6u),")
    assert "exo_0thr_cta = blockIdx.x % 2; exo_0thr_cta < 1" in task[:mma]  # the leader CTA
    assert "exo_Sm100_smemDesc(B_s, 256u, 6u), 0x10100910u, 1u);" in task
    assert ("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::"
            "cluster.b64 [%0], %1;") in task
    assert "// done: 1 x ring of depth 1 at exo_smem + 5152, arrival count 1" in text
    assert "exo_mbarrierArriveRemote" not in text  # commits reach peers by their CTA mask


@pytest.mark.rule("BW-CG-7")
def test_before_thread_sync_fence(tmp_path: Path) -> None:
    """`Fence(tcgen05_before_thread_sync, cuda_in_order)` before the dealloc (proved): the
    tcgen05 fence, then the CTA barrier."""
    old = "            Fence(cuda_in_order, cuda_in_order)\n            with CudaWarps(0, 1):\n" \
          "                Sm100_tmem_dealloc"
    source = GEMM.read_text()
    assert source.count(old) == 1
    path = tmp_path / "bw_gemm.py"
    path.write_text(source.replace(old, old.replace("Fence(cuda_in_order, cuda_in_order)",
                                                    "Fence(tcgen05_before_thread_sync, "
                                                    "cuda_in_order)")))
    text = _emitted(path, "bw_gemm")
    fence = text.index("// Fence(tcgen05_before_thread_sync, cuda_in_order): cta scope")
    lines = text[fence:].splitlines()[1:3]
    assert [line.strip() for line in lines] == [
        'asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");',
        'asm volatile("barrier.cta.sync 0;" ::: "memory");']


@pytest.mark.rule("BW-CG-2")
@pytest.mark.rule("BW-CG-10")
def test_tmem_a_text() -> None:
    """A in TMEM (bw_gemm_tmem_a, proved): the accumulator zeroed by tcgen05.st, A copied by
    tcgen05.cp and read by address; the 32-column allocation takes the kernel's 64."""
    text = _emitted(PROGRAMS / "bw_gemm_tmem_a.py", "bw_gemm_tmem_a")
    task = text[text.index("void exo_deviceTask("):]
    zero = task.index("exo_Sm100_zeroRow<64>(Z);")
    st = task.index("exo_Sm100_tmemSt32x32b_x64(Z, D[0]);")
    wait = task.index('asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");')
    assert zero < st < wait
    assert task.count("// 32 columns asked, 64 taken (BW-CG-2)") == 2
    assert '"r"(static_cast<uint32_t>(__cvta_generic_to_shared(A_t))), "r"(64u)' in task
    cp = task.index('asm volatile("tcgen05.cp.cta_group::1.128x256b [%0], %1;" :: "r"(A_t[0]), '
                    '"l"(exo_Sm100_smemDesc(A_s, 256u, 6u)) : "memory");')
    mma = task.index("exo_Sm100_mma_tf32_ts_cta1(D[0], A_t[0],")
    assert cp < mma
    assert "tcgen05.mma.cta_group::1.kind::tf32 [%0], [%1], " in text


@pytest.mark.rule("BW-CG-11")
def test_linear_operands_stored_swizzled(tmp_path: Path) -> None:
    """bw_gemm_f16's CudaSmemLinear tiles (rows of 32 bytes) are only tcgen05.mma operands:
    stored 32-byte-swizzled, the threads' stores go through the swizzle; a tile also reached
    through a window statement keeps its linear layout, and the MMA is refused."""
    path = PROGRAMS / "bw_gemm_f16.py"
    text = _emitted(path, "bw_gemm_f16")
    assert "(*exo_swizzled<32>(&A_s[" in text and "(*exo_swizzled<32>(&B_s[" in text
    assert "exo_Sm100_mma_f16_cta1(D[0], exo_Sm100_smemDesc(A_s, 256u, 6u)," in text
    assert "% 256u;" in text  # the SMEM base aligned to one 8-row swizzle atom
    source = path.read_text()
    old = "Sm100_mma_f16_cta1(D[:, :], A_s[:, :], B_s[:, :], M=128, N=64)"
    assert source.count(old) == 1
    line = next(t for t in source.splitlines() if old in t)
    pad = line[:len(line) - len(line.lstrip())]
    edited = source.replace(line, f"{pad}a_w = A_s[:, :]\n{line.replace('A_s[:, :]', 'a_w')}")
    with pytest.raises(Unsupported) as info:
        _hand(edited, tmp_path, "bw_gemm_f16")
    assert info.value.code == "ERR-L06" and "operand a must be a K-major window" in str(info.value)


@pytest.mark.rule("BW-CG-3")
def test_f16_kind() -> None:
    """kind::f16 (tests/codegen/codegen_kernels.py, proved): f16 A and B, K = 16 halves = the
    32-byte swizzle row; A and B type 0 in the instruction descriptor."""
    text = emit_cuda(*local("bw_mma_f16"))
    assert "exo_Sm100_mma_f16_cta1(D[0], exo_Sm100_smemDesc(A_s, 256u, 6u)," in text
    assert "exo_Sm100_smemDesc(B_s, 256u, 6u), 0x8100010u, 0u);" in text  # D = A * B
    assert "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, " in text


# the MMA call of a first K step and of the others: enable-input-d 0, then 1 (BW-2.3)
_FIRST_K_STEP = re.compile(r"if \(\((k == 0)[^\n]*\) \{\n\s*exo_Sm100_mma_\w+\([^;]*, 0u\);\n"
                           r"\s*\} else \{\n\s*exo_Sm100_mma_\w+\([^;]*, 1u\);\n\s*\}")


@pytest.mark.rule("BW-2.3")
@pytest.mark.rule("BW-CG-3")
@pytest.mark.parametrize("case", [c for c in _cases("proved") if "tmem_a" not in c[1]],
                         ids=lambda c: c[1])
def test_first_k_step_overwrites(case: tuple[Path, str]) -> None:
    """Every GEMM's first K step issues tcgen05.mma with enable-input-d false (D = A * B, TMEM
    is undefined after tcgen05.alloc); the later steps accumulate. The helper turns the last
    argument into the predicate."""
    text = _emitted(*case)
    task = text[text.index("void exo_deviceTask("):]
    assert len(_FIRST_K_STEP.findall(task)) == 1, task
    assert '"setp.ne.b32 exo_p, %4, 0;\\n\\t"' in text
    assert re.search(r'"tcgen05\.mma\.cta_group::[12]\.kind::\w+ \[%0\], %1, "\n\s*"%2, %3, "\n'
                     r'\s*"exo_p;', text)


@pytest.mark.rule("BW-2.3")
def test_accumulate_only_gemm_emits_enable_input_d_true(tmp_path: Path) -> None:
    """The accumulating form alone (a legal program) lowers with enable-input-d 1 only."""
    source = GEMM.read_text()
    line = next(ln for ln in source.splitlines() if "Sm100_mma_tf32_cta1(" in ln)
    pad = " " * (len(line) - len(line.lstrip()) - 4)
    block = f"{pad}if k == 0:\n{line.replace('_cta1', '_zero_cta1')}\n{pad}else:\n{line}\n"
    assert block in source
    path = tmp_path / "bw_gemm.py"
    path.write_text(source.replace(block, f"{pad}{line.lstrip()}\n"))
    task = _emitted(path, "bw_gemm")
    assert task.count("exo_Sm100_mma_tf32_cta1(D[0]") == 1
    assert "0x8100910u, 1u);" in task and "0x8100910u, 0u);" not in task


@pytest.mark.rule("BW-CG-3")
@pytest.mark.rule("BW-2.5")
def test_f8f6f4_kind() -> None:
    """kind::f8f6f4 (bw_gemm_f8, proved): e4m3 (`__nv_fp8_e4m3`) A and B, K = 32 bytes = the
    32-byte swizzle row; E4M3 is type 0 of kind::f8f6f4 in the instruction descriptor."""
    text = _emitted(PROGRAMS / "bw_gemm_f8.py", "bw_gemm_f8")
    assert "#include <cuda_fp8.h>" in text
    assert "__nv_fp8_e4m3* const A_s = reinterpret_cast<__nv_fp8_e4m3*>(" in text
    assert "(*exo_swizzled<32>(&A_s[" in text and "(*exo_swizzled<32>(&B_s[" in text
    assert "exo_Sm100_mma_f8f6f4_cta1(D[0], exo_Sm100_smemDesc(A_s, 256u, 6u)," in text
    assert "exo_Sm100_smemDesc(B_s, 256u, 6u), 0x8100010u, 1u);" in text
    assert "tcgen05.mma.cta_group::1.kind::f8f6f4 [%0], %1, " in text


@pytest.mark.rule("BW-CG-3")
def test_instruction_descriptor() -> None:
    """PTX ISA "Instruction descriptor": D f32 at bits 4-5, A/B type at 7-9 / 10-12, N >> 3 at
    17-22, M >> 4 at 24-28."""
    from verifier.codegen.sm100_rows import idesc as _idesc

    def fields(word: int) -> tuple[int, int, int, int, int]:
        return (word >> 4 & 3, word >> 7 & 7, word >> 10 & 7, word >> 17 & 63, word >> 24 & 31)
    assert fields(_idesc("tf32", "float", 128, 64, None)) == (1, 2, 2, 8, 8)
    assert fields(_idesc("tf32", "float", 256, 64, None)) == (1, 2, 2, 8, 16)
    assert fields(_idesc("f16", "__half", 128, 256, None)) == (1, 0, 0, 32, 8)
    assert fields(_idesc("f16", "__nv_bfloat16", 128, 16, None)) == (1, 1, 1, 2, 8)
    assert fields(_idesc("f8f6f4", "__nv_fp8_e4m3", 128, 64, None)) == (1, 0, 0, 8, 8)
    with pytest.raises(Unsupported):
        _idesc("f16", "__nv_fp8_e4m3", 128, 64, None)
    with pytest.raises(Unsupported):
        _idesc("tf32", "__half", 128, 64, None)


@pytest.mark.rule("BW-CG-4")
def test_multicast_commit_names_both_ctas() -> None:
    text = emit_cuda(*local("bw_gemm_commit_multicast"))
    assert file_target(text) == "sm_100a"
    assert ("const uint16_t exo_mask = static_cast<uint16_t>((1u << (exo_rank ^ 0u)) | "
            "(1u << (exo_rank ^ 1u)));") in text
    assert "mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;" in text
    # 128-byte swizzle: mode 2, 8 rows x 128 bytes; the K slice of each MMA moves the start
    assert "exo_Sm100_smemDesc((A_s + (k % 2) * 4096 + (8 * kk)), 1024u, 2u)" in text


@pytest.mark.rule("SEM-8.1")
@pytest.mark.rule("SEM-8.4")
def test_tma_store_epilogue_lowers_for_sm100a() -> None:
    """bw_gemm_tma_store: the staging-buffer writes, then the CTA barrier and the proxy fence,
    then one warp's TMA store (the Hopper lowering, `global.shared::cta` bulk group), its commit
    and `wait_group 0`, then the CTA barrier before the next task reuses the buffer."""
    text = _emitted(PROGRAMS / "bw_gemm_tma_store.py", "bw_gemm_tma_store")
    task = text[text.index("void exo_deviceTask("):]
    order = ["exo_Sm100_storeRow<64>(C_s, 64, 1, Dr);", 'asm volatile("barrier.cta.sync 0;"',
             'asm volatile("fence.proxy.async;"', "exo_Sm90_tmaStore<2, false>(",
             '"cp.async.bulk.commit_group;"', '"cp.async.bulk.wait_group 0;"',
             'asm volatile("barrier.cta.sync 0;"', "tcgen05.dealloc"]
    at = 0
    for piece in order:
        at = task.index(piece, at) + len(piece)
    assert "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group" in text


@pytest.mark.rule("BW-CG-8")
@pytest.mark.parametrize("case", default_first([(c,) for c in _cases("refuted")],
                                               ids=lambda row: row[0][1]))
def test_refuted_proc_emits_nothing(case: tuple[Path, str], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(case[0]), "--emit-cuda", str(tmp_path)]) == 1
    assert not list(tmp_path.iterdir())
    assert "REFUTED" in capsys.readouterr().out


@pytest.mark.parametrize(("old", "new", "rule", "line_of", "message"), [
    ("Sm100_mma_tf32_cta1(D[:, :], A_s[:, :], B_s[:, :], M=128, N=64)",
     "Sm100_mma_tf32_cta1(D[0:64, :], A_s[0:64, :], B_s[:, :], M=64, N=64)", "BW-CG-3",
     "M=64, N=64)", "only M = 128 per CTA keeps row r of D in TMEM lane r"),
    ("Sm100_tmem_relinquish_alloc_permit()", "Sm100_tmem_relinquish_alloc_permit_cta2()",
     "BW-CG-9", "relinquish_alloc_permit_cta2", "PTX requires one .cta_group per kernel"),
    ("                    Fence(tcgen05_ld, cuda_in_order)\n",
     "                    for t in cuda_threads(0, 16, unit=cuda_thread):\n"
     "                        Fence(tcgen05_ld, cuda_in_order)\n", "BW-CG-6",
     "Fence(tcgen05_ld", "runs on part of warp 4 only"),
    ("                Sm100_tmem_dealloc(D[:, :], ncols=64)\n",
     "                Sm100_tmem_dealloc(D[:, :], ncols=64)\n"
     "            E: f32[128, 512] @ Sm100_Tmem\n"
     "            with CudaWarps(0, 1):\n"
     "                Sm100_tmem_alloc(E[:, :], ncols=512)\n"
     "                Sm100_tmem_dealloc(E[:, :], ncols=512)\n", "BW-CG-2",
     "Sm100_tmem_alloc(E", "2 tcgen05.allocs of 512 columns each exceed the 512 TMEM columns"),
])
def test_refusals_name_rule_and_line(old: str, new: str, rule: str, line_of: str,
                                     message: str, tmp_path: Path) -> None:
    source = GEMM.read_text()
    assert old in source
    edited = source.replace(old, new)
    with pytest.raises(Unsupported) as info:
        _hand(edited, tmp_path)
    assert info.value.code == "ERR-L06" and info.value.rule == rule
    assert message in str(info.value)
    line = next(k for k, text in enumerate(edited.splitlines(), 1) if line_of in text)
    assert info.value.loc.line == line


def test_rows_name_stdlib_instrs() -> None:
    """Every row lowers a stdlib instr, and every stdlib Sm100 instr has a row or is a TMEM
    allocator (lowered by the device emitter, BW-CG-2)."""
    from verifier.codegen.sm100 import ALLOCATORS
    from verifier.lang.stdlib.instrs_sm100 import SM100_INSTRS
    assert set(SM100_ROWS) | set(ALLOCATORS) == set(SM100_INSTRS)


@pytest.mark.nvcc
@needs_nvcc
@pytest.mark.rule("BW-CG-1")
@pytest.mark.extended  # .ci/run (issue 20: the default run's time budget)
def test_proved_and_multicast_kernels_compile_for_sm100a(tmp_path: Path) -> None:
    assert NVCC_FLAGS["sm_100a"] == ("-arch=compute_100a", "-code=sm_100a,compute_100a")
    texts = {name: _emitted(path, name) for path, name in _cases("proved")}
    texts["bw_gemm_commit_multicast"] = emit_cuda(*local("bw_gemm_commit_multicast"))
    texts["bw_mma_f16"] = emit_cuda(*local("bw_mma_f16"))
    compile_together(tmp_path, texts, "sm_100a")


@pytest.mark.nvcc
@needs_nvcc
def test_sm100a_file_stops_on_hopper(tmp_path: Path) -> None:
    from test_codegen_nvcc import nvcc
    source = tmp_path / "bw_gemm.cu"
    source.write_text(_emitted(GEMM, "bw_gemm"))
    result = nvcc(source, "sm_90a")
    assert result.returncode != 0
    assert "compile with -arch=compute_100a -code=sm_100a,compute_100a" in result.stderr
