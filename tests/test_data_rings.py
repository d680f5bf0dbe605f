"""Endgame's managed ring buffers of data (specs/dialects.md DIAL-18) and the rewrites that set
them (specs/upstream_api.md API-1): upstream's test_ring_buffer_scheduling.py, as a script
calls them, with upstream's exception types and words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.cli import main
from verifier.lang import (
    CudaMbarrier, ring_buffer_by, set_dim_size_annotation, set_ring_guarded_by,
)
from verifier.lang.ir.printer import proc_text
from verifier.load.load import load_procs

ENDGAME = Path(__file__).resolve().parent / "programs_endgame"

_BARRIER = '''from verifier.lang import *


@proc
def p(K: size):
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, 1):
            my_barrier: barrier[4 @ ring_buffer_by(3), 2, K] @ CudaMbarrier
            for k in seq(0, K):
                for x in cuda_threads(0, 4, unit=2 * cuda_warp):
                    for y in cuda_threads(0, 2, unit=cuda_warp):
                        some_scalar: f32 @ CudaRmemUniform(32)
                        some_scalar = 1337
                        Arrive(cuda_in_order) >> my_barrier[x, y, k]
                        Await(my_barrier[x, y, k], cuda_in_order, 0)
'''


def _proc(tmp_path: Path, text: str):  # noqa: ANN202 - an ir.Proc
    path = tmp_path / "k.py"
    path.write_text(text)
    return load_procs(str(path))[0]


@pytest.mark.rule("API-1")
def test_set_dim_size_annotation_as_upstream(tmp_path: Path) -> None:
    p = _proc(tmp_path, _BARRIER)
    cursor = p.find_alloc_or_arg("my_barrier")
    assert cursor.mem() == CudaMbarrier
    assert [d.size_annotation() for d in cursor.shape()] == [ring_buffer_by(3), None, None]
    p = set_dim_size_annotation(p, cursor, 2, ring_buffer_by(4))
    cursor = p.forward(cursor)
    assert [d.size_annotation() for d in cursor.shape()] == \
        [ring_buffer_by(3), None, ring_buffer_by(4)]
    p = set_dim_size_annotation(p, cursor, 0, None)
    cursor = p.forward(cursor)
    assert [d.size_annotation() for d in cursor.shape()] == [None, None, ring_buffer_by(4)]
    assert "my_barrier: barrier[4, 2, K @ ring_buffer_by(4)] @ CudaMbarrier" in proc_text(p)
    with pytest.raises(TypeError):
        set_dim_size_annotation(p, cursor, 0, 3.4)
    for bad in (-1, 4):
        with pytest.raises(ValueError, match=f"out-of-bounds dimension index {bad}"):
            set_dim_size_annotation(p, cursor, bad, None)
    with pytest.raises(ValueError):
        set_dim_size_annotation(p, p.find_alloc_or_arg("some_scalar"), 0, None)


@pytest.mark.rule("DIAL-2")
def test_a_second_ring_dimension_set_by_the_rewrite_is_rejected(tmp_path: Path) -> None:
    text = _BARRIER + '\n\np = set_dim_size_annotation(p, "my_barrier", 2, ring_buffer_by(3))\n'
    path = tmp_path / "two_rings.py"
    path.write_text(text)
    out = tmp_path / "out.json"
    assert main([str(path), "--no-progress", "--format", "json", "--output", str(out)]) == 2
    finding = json.loads(out.read_text())["results"][0]["findings"][0]
    assert "multiple managed ring buffer dimensions in my_barrier: barrier[" in \
        finding["message"]
    assert finding["location"]["line"] == 8


_GUARDED = '''from verifier.lang import *


@proc
def p(K: size):
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, 1):
            dummy_smem: f32[2, 16] @ CudaSmemLinear
            dummy_barrier: barrier[K @ ring_buffer_by(4)] @ CudaMbarrier
            my_barrier: barrier[K] @ CudaMbarrier
            smem: f32[K @ ring_buffer_by(4), 16].ring_guarded_by(dummy_barrier) @ CudaSmemLinear
            for k in seq(0, K):
                for i in cuda_threads(0, 16):
                    dummy_smem[0, i] = 2
'''


@pytest.mark.rule("API-1")
@pytest.mark.rule("DIAL-18")
def test_set_ring_guarded_by_as_upstream(tmp_path: Path) -> None:
    p = _proc(tmp_path, _GUARDED)
    smem = p.find_alloc_or_arg("smem")
    assert smem.ring_guarded_by() == "dummy_barrier"
    assert [d.size_annotation() for d in smem.shape()] == [ring_buffer_by(4), None]
    p = set_ring_guarded_by(p, smem, None)
    assert p.forward(smem).ring_guarded_by() is None
    my_barrier = p.find_alloc_or_arg("my_barrier")
    p = set_ring_guarded_by(p, smem, my_barrier)
    assert p.forward(smem).ring_guarded_by() == "my_barrier"
    assert ".ring_guarded_by(my_barrier) @ CudaSmemLinear" in proc_text(p)
    with pytest.raises(TypeError) as exc:
        set_ring_guarded_by(p, smem, "dummy_smem")
    assert "dummy_smem: f32[2, 16]" in str(exc.value) and "not a barrier" in str(exc.value)
    with pytest.raises(TypeError, match="K is an argument, not an allocation"):
        set_ring_guarded_by(p, p.find_alloc_or_arg("K"), my_barrier)


def _json(path: Path, tmp_path: Path) -> dict:
    out = tmp_path / "out.json"
    main([str(path), "--no-progress", "--format", "json", "--output", str(out)])
    return json.loads(out.read_text())["results"][0]


@pytest.mark.rule("DIAL-18")
@pytest.mark.parametrize("name, kind, line, words", [
    ("data_ring_ws_bug_reorder_await", "RAW", 22, "use_before_alloc HAZARD @ buf[0, "),
    ("data_ring_ws_bug_early_release", "WAR", 23, "WAR HAZARD @ buf["),
    ("data_ring_ws_bug_shallow", "WAR", 24, "WAR HAZARD @ buf[")])
def test_data_ring_bugs_refuted_with_kind_variable_line(tmp_path: Path, name: str, kind: str,
                                                        line: int, words: str) -> None:
    result = _json(ENDGAME / f"{name}.py", tmp_path)
    assert result["verdict"] == "refuted"
    found = [(f["kind"], f["variable"], f["location"]["line"]) for f in result["findings"]]
    assert (kind, "buf", line) in found
    assert any(words in f["message"] for f in result["findings"])
    assert all(f["counterexample"]["replayed"] for f in result["findings"]
               if f.get("counterexample"))


@pytest.mark.rule("DIAL-18")
@pytest.mark.extended  # .ci/run (issue 20: the default run's time budget)
def test_data_ring_pipeline_proved_and_lowered_on_its_slots(tmp_path: Path) -> None:
    assert _json(ENDGAME / "data_ring_ws.py", tmp_path)["verdict"] == "proved"
    out = tmp_path / "cuda"
    out.mkdir()
    assert main([str(ENDGAME / "data_ring_ws.py"), "--no-progress", "--emit-cuda",
                 str(out)]) == 0
    text = (out / "data_ring_ws.cu").read_text()
    assert "buf[(k % 3) * 128 + exo_1thr_t] = exo_deviceArgs.A[k * 128 + exo_1thr_t];" in text


@pytest.mark.rule("API-2")
def test_cursor_navigation_is_a_located_unsupported(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A cursor navigation spork-verify does not serve (`expand()`; `before()` and friends are
    API-7) is not an AttributeError (a crash of the user's script) but `unsupported`, ERR-V11,
    at the call."""
    path = tmp_path / "k.py"
    path.write_text(_BARRIER + '\n\nbefore = p.find_alloc_or_arg("my_barrier").expand()\n')
    code = main([str(path), "--format", "json", "--no-cache"])
    report = json.loads(capsys.readouterr().out)
    assert code == 3
    (result,) = report["results"]
    assert result["verdict"] == "unsupported"
    text = json.dumps(result)
    assert "ERR-V11" in text and "`.expand()` on my_barrier" in text
    assert f'"line": {_BARRIER.count(chr(10)) + 3}' in text
    cursor = _proc(tmp_path, _BARRIER).find_alloc_or_arg("my_barrier")
    assert not hasattr(cursor, "no_such_method")  # only upstream's cursor API is answered


_NESTED_GUARD = '''from verifier.lang import *


@proc
def nested(T: size, K: size, A: f32[K, 128] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=128):
        for task in cuda_tasks(0, T):
            g: barrier[(K + 1) @ ring_buffer_by(1)] @ CudaMbarrierPreArrive(1)
            for r in seq(0, 1):
                x: f32[K @ ring_buffer_by(1), 128].ring_guarded_by(g) @ CudaSmemLinear
                for k in seq(0, K):
                    Await(g[k], cuda_in_order, 0)
                    Fence(cuda_in_order, cuda_in_order)
                    for t in cuda_threads(0, 128):
                        x[k, t] = A[k, t]
                    Arrive(cuda_in_order) >> g[k + 1]
'''


@pytest.mark.rule("DIAL-20")
@pytest.mark.extended  # .ci/run (issue 20: the default run's time budget)
def test_a_tma_store_not_drained_is_refuted_at_the_rings_free(tmp_path: Path) -> None:
    """The end of a data ring's scope needs every access complete: the last TMA store of
    data_ring_store_bug_no_drain.py is not waited for (its correct form is proved)."""
    assert _json(ENDGAME / "data_ring_store.py", tmp_path)["verdict"] == "proved"
    result = _json(ENDGAME / "data_ring_store_bug_no_drain.py", tmp_path)
    assert result["verdict"] == "refuted"
    (finding,) = result["findings"]
    assert (finding["kind"], finding["variable"], finding["location"]["line"]) == \
        ("WAR", "stage", 22)
    assert finding["rule"] == "DIAL-20" and finding["code"] == "ERR-V04"
    assert finding["message"].startswith("free_missing_sync HAZARD @ free(stage[")
    assert "the access is not complete" in finding["message"]
    assert finding["related"][0]["line"] == 32  # the TMA store
    assert finding["counterexample"]["replayed"]


@pytest.mark.rule("DIAL-20")
def test_a_data_ring_outside_its_guards_block_keeps_sem_4_7(tmp_path: Path) -> None:
    """x is allocated in a loop nested in its guard's block: its instances need not follow
    the guard's re-initialisation, so its free keeps SEM-4.7 (every thread must see each
    write; here only the writing thread does). In the guard's block it is proved."""
    path = tmp_path / "nested.py"
    path.write_text(_NESTED_GUARD)
    result = _json(path, tmp_path)
    assert result["verdict"] == "refuted"
    assert {(f["kind"], f["variable"], f["rule"]) for f in result["findings"]} == \
        {("WAW", "x", "SEM-4.7")}
    path.write_text(_NESTED_GUARD.replace("            for r in seq(0, 1):\n", "")
                    .replace("\n                ", "\n            "))
    assert _json(path, tmp_path)["verdict"] == "proved"


_CLUSTER = '''from verifier.lang import *


@proc
def cluster_ring(T: size):
    with CudaDeviceFunction(clusterDim=2, blockDim=128, unsafe_no_shutdown_cluster_sync=UNSAFE):
        for task in cuda_tasks(0, T):
            g: barrier[2, 1 @ ring_buffer_by(1)] @ CudaMbarrier
            for c in cuda_threads(0, 2, unit=cuda_cta_in_cluster):
                Arrive(cuda_in_order) >> g[c, 0]
                Await(g[c, 0], cuda_in_order, 0)
'''


@pytest.mark.rule("DIAL-20")
@pytest.mark.parametrize("unsafe, relaxed", [(False, {"g"}), (True, set())])
def test_no_exit_barrier_in_a_cluster_keeps_sem_4_7(tmp_path: Path, unsafe: bool,
                                                    relaxed: set[str]) -> None:
    """Without the kernel's exit cluster barrier (CG-X1) a peer's remote arrive may still be
    on its way when a CTA exits: DIAL-20 does not apply there."""
    from verifier.lang.rewrite.inline import inline_calls
    from verifier.semantics.data_rings import complete_at_free
    proc = _proc(tmp_path, _CLUSTER.replace("UNSAFE", str(unsafe)))
    assert {s.name for s in complete_at_free(inline_calls(proc).body)} == relaxed


@pytest.mark.rule("DIAL-21", "DIAL-12", "CG-X1")
@pytest.mark.parametrize("unsafe, target, exempt", [
    (False, "g[c, 0]", {"g"}), (True, "g[c, 0]", {"g"}),
    (False, "g[c, 0] >> g[:, 0]", {"g"}), (True, "g[c, 0] >> g[:, 0]", set())])
def test_a_multicast_ring_without_the_exit_barrier_keeps_its_free_check(
        tmp_path: Path, unsafe: bool, target: str, exempt: set[str]) -> None:
    """DIAL-12 exempts an in-order ring's free; DIAL-21 takes that back for a ring some Arrive
    multicasts on (a remote arrive) in a cluster kernel without the exit cluster barrier. A
    ring arrived on only by its own CTA stays exempt: its arrives are complete when its threads
    pass them, and a CTA exits after its threads."""
    from verifier.lang.rewrite.inline import inline_calls
    from verifier.semantics.ring_slots import synchronous_rings
    text = _CLUSTER.replace("UNSAFE", str(unsafe)).replace(
        "Arrive(cuda_in_order) >> g[c, 0]", f"Arrive(cuda_in_order, 1) >> {target}")
    proc = _proc(tmp_path, text)
    assert {s.name for s in synchronous_rings(inline_calls(proc))} == exempt


@pytest.mark.rule("DIAL-21", "SEM-4.7", "CG-X1")
def test_a_remote_arrive_nobody_awaits_before_exit_is_refuted(tmp_path: Path) -> None:
    """The gap DIAL-21 closes: without the final cluster Fence, CTA 1's last remote Arrive may
    reach CTA 0's mbarrier after CTA 0 exited (no exit cluster barrier). Refuted by Z3 and
    replayed by the machine at `bar`'s free; with the Fence, or with the exit barrier back,
    proved."""
    assert _json(ENDGAME / "ring_remote_release_fenced.py", tmp_path)["verdict"] == "proved"
    bug = ENDGAME / "ring_remote_release_bug_no_exit_sync.py"
    result = _json(bug, tmp_path)
    assert result["verdict"] == "refuted"
    found = {(f["kind"], f["variable"], f["location"]["line"], f["related"][0]["line"])
             for f in result["findings"]}
    assert ("WAW", "bar", 13, 19) in found  # the allocation, the Arrive on bar[:, 1]
    assert all(f["code"] == "ERR-V04" and f["counterexample"]["replayed"]
               and f["message"].startswith("free_missing_sync HAZARD @ free(bar[")
               for f in result["findings"])
    assert any(o["status"] == "refuted" and o["rule"] == "SEM-4.7"
               for o in result["obligations"])
    safe = tmp_path / "safe.py"
    safe.write_text(bug.read_text().replace(", unsafe_no_shutdown_cluster_sync=True", ""))
    assert _json(safe, tmp_path)["verdict"] == "proved"
