"""Upstream-style programs (tests/upstream_style/): files written for Exo-GPU load unchanged
and get their expected verdicts (LOAD-6 and the upstream surface, issue 8)."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from verifier.diagnostics import RejectedInput
from verifier.encode import verify_proc
from verifier.load.load import load_procs
from verifier.load.load_isolated import load_isolated

from conftest import REVERSED_TILE_HEAD, ROOT, case_params, expectations

UPSTREAM_STYLE = ROOT / "tests" / "upstream_style"
CASES = [e for f in sorted(UPSTREAM_STYLE.glob("*.py")) for e in expectations(f)]


# every proof and refusal; one refutation per finding kind (all in .ci/run)
@pytest.mark.parametrize("case", case_params(CASES, sample=("refuted", "proved")))
def test_upstream_style_verdict(case) -> None:  # type: ignore[no-untyped-def]
    loaded = load_isolated(case.file)
    procs = {p.name: p for p in loaded.procs}
    if case.verdict == "rejected" and case.proc not in procs:
        assert loaded.error is not None and case.kind in (loaded.error.code, None)
        return
    result = verify_proc(procs[case.proc])
    assert result.verdict.value == case.verdict, result
    if case.kind:
        finding = result.findings[0]
        assert case.kind in (finding.kind.value, finding.code)
        if case.variable:
            assert finding.variable == case.variable
        if case.line:
            assert finding.loc.line == case.line


@pytest.mark.rule("LOAD-6")
def test_exo_names_are_ours_only_while_loading() -> None:
    real_exo = types.ModuleType("exo")  # stands for an installed exo-lang package
    sibling = "saxpy_pre_config"
    sys.modules["exo"] = real_exo
    try:
        procs = load_procs(UPSTREAM_STYLE / "saxpy_upstream_imports.py")
        assert [p.name for p in procs] == ["saxpy"]
        assert sys.modules["exo"] is real_exo
        assert not any(k.startswith("exo.") for k in sys.modules)
    finally:
        del sys.modules["exo"]
    assert sibling not in sys.modules
    assert str(UPSTREAM_STYLE) not in sys.path


@pytest.mark.rule("LOAD-6")
def test_missing_upstream_name_is_a_located_rejection(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text("from exo.platforms.cuda import no_such_thing\n")
    loaded = load_isolated(path)
    assert loaded.error is not None and loaded.error.loc.line == 1
    assert "exo.platforms.cuda.no_such_thing is not part of spork-verify" in \
        loaded.error.message


def _walk(node):  # type: ignore[no-untyped-def]
    import dataclasses
    yield node
    if isinstance(node, tuple):
        for x in node:
            yield from _walk(x)
    elif dataclasses.is_dataclass(node) and not isinstance(node, type):
        for f in dataclasses.fields(node):
            yield from _walk(getattr(node, f.name))


@pytest.mark.rule("API-1")
def test_factory_proc_is_scheduled_as_upstream_schedules_it() -> None:
    from verifier.lang.ir import ir
    procs = {p.name: p for p in load_procs(UPSTREAM_STYLE / "exchange_factory.py")}
    p = procs["exchange_fenced_t128"]
    assert p.name() == "exchange_fenced_t128" and isinstance(p.name(), str)
    allocs = {s.name.name: s for s in _walk(p.body) if isinstance(s, ir.Alloc)}
    assert "unused" not in allocs  # delete_buffer
    assert allocs["tile"].typ.base == "f16"  # set_precision
    assert not any(isinstance(s, ir.If) for s in _walk(p.body))  # Python ifs and `if True:`
    fences = [s for s in _walk(p.body) if isinstance(s, ir.Fence)]
    assert len(fences) == 2 and \
        len([s for s in _walk(procs["exchange_unfenced_t128"].body)
             if isinstance(s, ir.Fence)]) == 1


UPSTREAM_HEAD = REVERSED_TILE_HEAD


def _load_tail(tmp_path: Path, tail: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "k.py"
    path.write_text(UPSTREAM_HEAD + tail)
    return load_isolated(path), len(UPSTREAM_HEAD.splitlines()) + 1


@pytest.mark.rule("API-3")
def test_sync_check_raises_with_the_machine_finding(tmp_path: Path) -> None:
    """In-process (upstream's order, SYNC-7's last point): the machine runs at the call and
    raises with its finding; the CLI's deferred answer is tests/test_sync_record.py's."""
    path = tmp_path / "k.py"
    path.write_text(UPSTREAM_HEAD + "k.sync_check(n=512)\n")
    with pytest.raises(RejectedInput) as caught:
        load_procs(path)
    err = caught.value
    assert err.rule == "API-3" and err.proc == "k"
    assert "RAW" in err.message and "n=512" in err.message and err.variable == "tile"
    assert err.loc.line == 15  # the racy read, where the machine found it
    loaded, _ = _load_tail(tmp_path, "k.sync_check(n=100)\n")
    assert loaded.error is not None and "violate the proc's asserts" in loaded.error.message


@pytest.mark.rule("API-1")
def test_delete_buffer_refuses_a_used_buffer(tmp_path: Path) -> None:
    loaded, line = _load_tail(tmp_path, "k = delete_buffer(k, k.find_alloc_or_arg('tile'))\n")
    assert loaded.error is not None and loaded.error.loc.line == line
    assert "tile is still used" in loaded.error.message


@pytest.mark.rule("API-2")
@pytest.mark.parametrize("call, name", [
    ("k = divide_loop(k, 'blk', 4, ['a', 'b'])", "scheduling operation divide_loop"),
    ("k.find('blk')", "Procedure.find"),
    ("k.find_child_loop('blk')", "Procedure.find_child_loop"),
    # replace outside the copy shape of API-1
    ("k = replace(k, k.find_loop('t'), cuda_packed32_load)", "not seq(0, n)"),
    ("k = replace(k, k.find_loop('blk'), cudaMemcpyAsync_htod_1d)", "is not one copy"),
    ("k = replace(k, k.find_loop('t #1'), cuda_packed32_load)", "not seq(0, n)"),
    ("k.find_loop('for t in _: _')", "find_loop"),
    # upstream's loop-mode names exist (API-5), so the rewrite itself is what is refused
    # (set_loop_mode is API-7)
    ("k = update_loop_mode(k, k.find_loop('blk'), unit=cuda_warp)",
     "scheduling operation update_loop_mode"),
    ("k = parallelize_loop(k, k.find('_ = tile[_]'))", "scheduling operation parallelize_loop"),
])
def test_unreproduced_rewrite_is_unsupported_naming_it(tmp_path: Path, call: str,
                                                       name: str) -> None:
    from verifier.diagnostics import Unsupported
    loaded, line = _load_tail(tmp_path, call + "\n")
    assert isinstance(loaded.error, Unsupported) and name in loaded.error.message
    assert loaded.error.loc.line == line


@pytest.mark.rule("LANG-4.2")
def test_sm80_fragment_loads_take_swizzled_smem_as_upstream() -> None:
    """Upstream declares the fragment loads' source `CudaDeviceVisibleAtomicity16B`, which its
    Sm90_SmemSwizzled subclasses (and, by upstream's class hierarchy, CudaRmem and
    CudaGridConstant through CudaDeviceVisibleLinear); packed or matrix registers stay refused."""
    from verifier.lang import CudaRmemPacked32, Sm80_RmemMatrixA, Sm90_SmemSwizzled
    from verifier.lang.stdlib.instrs import INSTRS
    formal = INSTRS["Sm80_mma_load_a_row_major_tf32"].params[1].formal_mem
    assert formal in Sm90_SmemSwizzled(128).bases
    assert formal not in CudaRmemPacked32.bases and formal not in Sm80_RmemMatrixA.bases


@pytest.mark.rule("API-5")
def test_find_and_gaps_reach_the_first_rewrite(tmp_path: Path) -> None:
    """`find` names statements as upstream's cursors do; a rewrite given a gap is API-2."""
    from verifier.diagnostics import Unsupported
    from verifier.lang.ir import ir
    path = tmp_path / "k.py"
    path.write_text(UPSTREAM_HEAD + "a = k.find('tile[_] = x[_]')\n"
                    "b = k.find('_ = tile[255 - t]')\n"
                    "assert a.loc.line == 13 and b.loc.line == 15, (a, b)\n"
                    "assert k.find('for t in _: _ #1') is k.find_loop('t #1')\n"
                    "k = fission(k, k.find('_ = tile[_]').after())\n")
    loaded = load_isolated(path)
    assert isinstance(loaded.error, Unsupported), loaded.error
    assert "scheduling operation fission" in loaded.error.message
    assert loaded.error.loc.line == len(UPSTREAM_HEAD.splitlines()) + 5
    gap = ir.Pass(ir.SrcLoc("f", 1, 1)).before()
    assert gap.side == "before" and isinstance(gap.stmt, ir.Pass)


@pytest.mark.rule("API-5")
def test_find_without_a_match_is_refused(tmp_path: Path) -> None:
    loaded, line = _load_tail(tmp_path, "k.find('tile[_] = 0')\n")
    assert loaded.error is not None and "0 matching statement(s)" in loaded.error.message
    assert loaded.error.loc.line == line


CUT_HEAD = """from __future__ import annotations
from exo import *
from exo.platforms.cuda import *
from exo.platforms.Sm90 import *
from exo.stdlib.scheduling import *

@proc
def k(n: size, m: size, x: f32[n, 4] @ CudaGmemLinear):
    assert m > 2
    x_map = x[:, :] @ Sm90_tensorMap(0, 8, 4)
    with CudaDeviceFunction(blockDim=32):
        for blk in cuda_tasks(0, n):
            for it in seq(0, (m + 7) / 8):
                acc: f32[4] @ CudaRmem
                for t in cuda_threads(0, 4):
                    acc[t] = x[blk, t]
                    x[blk, t] = acc[t]
"""


@pytest.mark.rule("API-4")
def test_cut_loop_splits_with_fresh_binders(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text(CUT_HEAD + "k = cut_loop(k, k.find_loop('it'), 1)\n"
                    "k = inline_window(k, 'x_map = _')\n")
    loaded = load_isolated(path)
    assert loaded.error is None, loaded.error
    (p,) = loaded.procs
    from verifier.lang.ir import ir
    task = p.body[0].body[0]
    first, second = task.body
    assert isinstance(first, ir.For) and isinstance(second, ir.For)
    assert first.hi == ir.Const(1, first.loc) and second.lo == ir.Const(1, second.loc)
    assert first.iter.name == second.iter.name and first.iter != second.iter
    assert first.body[0].name != second.body[0].name  # the allocation is renamed too
    assert not any(isinstance(s, ir.WindowStmt) for s in p.body)
    assert verify_proc(p).verdict.value == "proved"


@pytest.mark.rule("API-5")
def test_cut_at_a_found_loop_is_proved(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text(CUT_HEAD + "k = cut_loop(k, k.find('for it in _: _'), 1)\n"
                    "assert isinstance(k.find_loop('it #1'), ForCursor)\n")
    loaded = load_isolated(path)
    assert loaded.error is None, loaded.error
    assert verify_proc(loaded.procs[0]).verdict.value == "proved"


@pytest.mark.rule("API-4")
@pytest.mark.parametrize("call, message", [
    ("k = cut_loop(k, k.find_loop('it'), 2)", "cannot show `cut_point` <= `hi`"),
    ("k = cut_loop(k, 'it #1', 1)", "has 1 loop(s) over it"),
    ("k = inline_window(k, 'y_map = _')", "no window statement of that name"),
])
def test_unprovable_cut_or_unknown_target_is_refused(tmp_path: Path, call: str,
                                                     message: str) -> None:
    path = tmp_path / "k.py"
    path.write_text(CUT_HEAD + call + "\n")
    loaded = load_isolated(path)
    assert loaded.error is not None and message in loaded.error.message, loaded.error


PER_CTA_SMEM = """from exo import *
from exo.platforms.cuda import *


@proc
def per_cta():
    with CudaDeviceFunction(clusterDim=2, blockDim=256):
        for task in cuda_tasks(0, 1):
            for cta in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                the_mem: f32[16, 16] @ CudaSmemLinear
                for y in cuda_threads(0, 16, unit=16 * cuda_thread):
                    for x in cuda_threads(0, 16, unit=cuda_thread):
                        the_mem[y, x] = 3
                Fence(cuda_in_order, cuda_in_order)
"""


@pytest.mark.rule("API-3")
@pytest.mark.rule("LANG-6.3")
def test_per_cta_smem_in_a_cluster_is_unsupported_and_sync_check_raises(tmp_path: Path) -> None:
    """Upstream's sync_check requires SMEM at cluster scope and raises; so does ours where it
    runs at once (the machine does not model one copy per CTA, so it must not report a hazard
    there), and the proof is unsupported, naming the allocation."""
    from verifier.diagnostics import Unsupported
    path = tmp_path / "k.py"
    path.write_text(PER_CTA_SMEM + "\nper_cta.sync_check()\n")
    with pytest.raises(Unsupported) as caught:
        load_procs(path)
    assert "cluster" in caught.value.message and "CudaSmemLinear" in caught.value.message
    assert caught.value.loc.line == 10
    path.write_text(PER_CTA_SMEM)
    result = verify_proc(load_isolated(path).procs[0])
    assert result.verdict.value == "unsupported" and "the_mem" in result.findings[0].message


@pytest.mark.rule("API-1")
def test_replace_puts_the_copy_call_upstream_unifies_in_place_of_the_nest() -> None:
    from verifier.lang.ir import ir
    procs = {p.name: p for p in load_procs(UPSTREAM_STYLE / "replace_copy.py")}
    nodes = list(_walk(procs["vec_add_f16"].body))
    calls = {n.callee.name: n for n in nodes if isinstance(n, ir.Call)}
    assert {"cudaMemcpyAsync_htod_1d", "cuda_packed32_load", "cuda_packed32_store"} <= set(calls)
    assert dict(calls["cuda_packed32_load"].kwargs) == {"pack": 2, "dst": "f16", "src": "f16"}
    dst, src = calls["cuda_packed32_load"].args
    assert isinstance(dst, ir.Window) and isinstance(dst.idx[0], ir.Interval)
    assert dst.buf.name == "r_x" and src.buf.name == "d_x"
    loops = {n.iter.name for n in nodes if isinstance(n, ir.For)}
    assert not loops & {"init_n", "pack_ld", "pack_st"}


@pytest.mark.rule("CALL-1")
@pytest.mark.parametrize("name, want", [("wrapper", "no-hazard-at-sizes"),
                                        ("wrapper_rows", "no-hazard-at-sizes"),
                                        ("wrapper_bug_alias", "refuted"),
                                        ("wrapper_bug_oob", "refuted")])
def test_inlined_call_machine_agrees_with_proof(name: str, want: str) -> None:
    """Differential: the concrete machine runs the same inlined program the proof reads."""
    from verifier.encode.verify import concrete_verdict
    procs = {p.name: p for p in load_procs(UPSTREAM_STYLE / "proc_calls.py")}
    verdict, finding = concrete_verdict(procs[name], {"n": 512})
    assert verdict.value == want, finding
    if finding is not None:
        assert finding.loc.file.endswith("proc_calls.py") and finding.loc.line in (25, 26)


@pytest.mark.rule("CALL-4")
def test_callee_assertions_shown_are_assumed() -> None:
    """`n > 0` of the callee holds for every size upstream allows (sizes are positive), so
    the inlined proc assumes it: n = 0 is outside its sizes, as for the callee itself."""
    from verifier.encode.verify import concrete_verdict
    from verifier.lang.rewrite.inline import inline_calls
    procs = {p.name: p for p in load_procs(UPSTREAM_STYLE / "proc_calls.py")}
    inlined = inline_calls(procs["wrapper"])
    assert len(inlined.preds) == len(procs["wrapper"].preds) + 1
    assert concrete_verdict(procs["wrapper"], {"n": 0})[0].value == "vacuous"
    assert concrete_verdict(procs["reverse"], {"n": 0})[0].value == "vacuous"


@pytest.mark.rule("CALL-3")
def test_call_argument_shape_mismatch_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "k.py"
    path.write_text(UPSTREAM_HEAD + "@proc\ndef w(x: f32[512] @ CudaGmemLinear):\n"
                    "    k(256, x[0:256])\n    k(512, x[0:256])\n")
    loaded = load_isolated(path)
    assert loaded.error is None, loaded.error
    (_, w) = loaded.procs
    result = verify_proc(w)
    assert result.verdict.value == "rejected"
    assert "extent 512" in result.findings[0].message
    assert result.findings[0].loc.line == len(UPSTREAM_HEAD.splitlines()) + 4
