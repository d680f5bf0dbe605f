"""Which Exo-GPU dialect a proc is read in (specs/dialects.md DIAL-1), and how the CLI reports
a proc mixing them or an endgame construct outside the fragment (exit 2 / 3, located, no
traceback)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from verifier.cli import main
from verifier.diagnostics import SporkError
from verifier.encode import verify_proc
from verifier.lang.ir.printer import proc_text
from verifier.lang.stdlib import dialects
from verifier.load.load import load_procs
from verifier.results import Verdict

from conftest import ROOT

ENDGAME = ROOT / "tests" / "programs_endgame"

# A proc with no marker of either dialect: a plain mbarrier awaited with N = 0.
_NEUTRAL = '''
@proc
def neutral():
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier @ CudaMbarrier
            Arrive(cuda_in_order) >> bar
            Await(bar, cuda_in_order, 0)
            Fence(cuda_in_order, cuda_in_order)
'''


def _write(tmp_path: Path, head: str, body: str = _NEUTRAL) -> Path:
    path = tmp_path / "kernel.py"
    path.write_text(textwrap.dedent(head) + body)
    return path


def _rejection(path: Path) -> SporkError:
    (p,) = load_procs(path)
    result = verify_proc(p)
    assert result.verdict is Verdict.rejected, result
    return result.findings[0]  # type: ignore[return-value]


@pytest.mark.rule("DIAL-1")
def test_unmarked_proc_takes_its_files_imports(tmp_path: Path) -> None:
    """An endgame import makes the unmarked proc endgame (its mbarrier lacks a ring, DIAL-2);
    without it the proc is February's (N = 0 is not a lag, LANG-5.9)."""
    endgame = _write(tmp_path, "from exo import proc, ring_buffer_by\n"
                               "from exo.platforms.cuda import *\n")
    finding = _rejection(endgame)
    assert finding.code == "ERR-L04" and "@ ring_buffer_by" in finding.message
    february = _write(tmp_path, "from verifier.lang import *\n")
    finding = _rejection(february)
    assert finding.code == "ERR-A29" and "N < 0" in finding.message


@pytest.mark.rule("DIAL-1")
def test_mechanism_value_is_evidence(tmp_path: Path) -> None:
    """A mechanism passed in as a Python value decides too: `Sm80_CommitGroup` is endgame's
    (its name then appears in the messages, DIAL-8)."""
    path = _write(tmp_path, "from verifier.lang import *\nmech = Sm80_CommitGroup\n", '''
@proc
def by_value():
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            for t in cuda_threads(0, 32):
                cg: barrier @ mech
                Arrive(Sm80_cp_async) >> cg
                Await(cg, cuda_in_order, -1)
''')
    (p,) = load_procs(path)
    assert p.dialect == dialects.ENDGAME
    finding = verify_proc(p).findings[0]
    assert finding.code == "ERR-A29" and "Sm80_CommitGroup requires N >= 0" in finding.message


@pytest.mark.rule("DIAL-1")
def test_printed_text_names_the_endgame_dialect() -> None:
    procs = {p.name: p for p in load_procs(ENDGAME / "two_dialects.py")}
    assert procs["february_lagged"].dialect == dialects.SPORK26
    assert procs["endgame_indexed"].dialect == dialects.ENDGAME
    assert "# dialect" not in proc_text(procs["february_lagged"])
    text = proc_text(procs["endgame_indexed"])
    assert "# dialect: endgame" in text
    assert "(K + 1) @ ring_buffer_by(1)] @ CudaMbarrierPreArrive(1)" in text


@pytest.mark.rule("DIAL-1")
def test_the_name_table_covers_both_dialects() -> None:
    assert dialects.marker("ring_buffer_by") == (dialects.ENDGAME, dialects.ENDGAME_NAMES[
        "ring_buffer_by"])
    assert dialects.marker("CudaCommitGroup")[0] == dialects.SPORK26  # type: ignore[index]
    assert dialects.marker("CudaTkWarpTile")[0] == dialects.ENDGAME  # type: ignore[index]
    assert dialects.marker("Fence") is None
    assert not set(dialects.ENDGAME_NAMES) & set(dialects.SPORK26_NAMES)


@pytest.mark.rule("DIAL-1")
def test_mixing_dialects_in_one_proc_exits_2_located(capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    path = ENDGAME / "mixed_dialects.py"
    code = main([str(path), "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 2
    assert f"{path}:15:17: static[ERR-P28]" in out
    assert "ring_buffer_by (line 12)" in out and "`Await(..., ~0)` (line 15)" in out
    assert "Traceback" not in out + err


@pytest.mark.rule("DIAL-18")
@pytest.mark.parametrize("name, line, what, code, err_code", [
    ("data_ring", 12, "managed ring buffer missing .ring_guarded_by smem: f32[2, K @ "
     "ring_buffer_by(4), 16]", 2, "ERR-A16"),
    ("ring_guarded_by", 13, "has incorrect managed ring buffer dimension index to match smem",
     2, "ERR-A16"),
    ("data_ring_rmem", 12, "the data ring buffer regs @ CudaRmem outside shared memory", 3,
     "ERR-V11")])
def test_ill_formed_data_ring_is_located(capsys: pytest.CaptureFixture[str], name: str,
                                         line: int, what: str, code: int, err_code: str
                                         ) -> None:
    path = ENDGAME / f"{name}.py"
    assert main([str(path), "--no-progress"]) == code
    out, err = capsys.readouterr()
    assert f"{path}:{line}:" in out and what in out and err_code in out
    assert "Traceback" not in out + err


@pytest.mark.rule("DIAL-2")
def test_ring_buffer_by_rejects_a_zero_depth(tmp_path: Path) -> None:
    path = _write(tmp_path, "from verifier.lang import *\n", '''
@proc
def zero_depth(K: size):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[K @ ring_buffer_by(0)] @ CudaMbarrier
''')
    with pytest.raises(SporkError) as err:
        load_procs(path)
    assert "Expected ring_buffer_by.depth > 0" in err.value.message
    assert err.value.loc.line == 7


# A tensor map of a window parameter: endgame's typecheck dropped February's "dense tensor" rule.
_MAP_OF_WINDOW = '''
@proc
def map_of_window(x: [f32][64, 64] @ CudaGmemLinear):
    x_map = x[:, :] @ Sm90_tensorMap(0, 64, 64)
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[1 @ ring_buffer_by(1)] @ CudaMbarrier
            Arrive(cuda_in_order) >> bar[0]
            Await(bar[0], cuda_in_order, 0)
'''


@pytest.mark.rule("DIAL-15")
def test_a_tensor_map_of_a_window_is_endgame_only(tmp_path: Path) -> None:
    (p,) = load_procs(_write(tmp_path, "from verifier.lang import *\n", _MAP_OF_WINDOW))
    assert p.dialect == dialects.ENDGAME
    assert verify_proc(p).verdict is Verdict.proved
    february = _MAP_OF_WINDOW.replace("barrier[1 @ ring_buffer_by(1)]", "barrier") \
        .replace("bar[0]", "bar").replace("Await(bar, cuda_in_order, 0)",
                                          "Await(bar, cuda_in_order, ~0)")
    with pytest.raises(SporkError) as err:
        load_procs(_write(tmp_path, "from verifier.lang import *\n", february))
    assert err.value.code == "ERR-P24" and "from a dense tensor" in err.value.message
    assert err.value.loc.line == 5  # the window statement (the file starts with the import)


@pytest.mark.rule("API-1")
@pytest.mark.rule("DIAL-2")
def test_cursor_shows_memory_and_ring_annotation() -> None:
    """Upstream's allocation cursor: name(), mem(), shape() with each dimension's
    size_annotation() (endgame's test_set_dim_size_annotation reads them before rewriting)."""
    from verifier.lang import CudaMbarrier, CudaMbarrierPreArrive, ring_buffer_by
    procs = {p.name: p for p in load_procs(ENDGAME / "cycle3.py")}
    cursor = procs["cycle3"].find_alloc_or_arg("AtoB")
    assert cursor.name() == "AtoB" and cursor.mem() == CudaMbarrier
    assert CudaMbarrierPreArrive(2).mech == CudaMbarrier
    dims = cursor.shape()
    assert [d.size_annotation() for d in dims] == [None, ring_buffer_by(6)]
    assert procs["cycle3"].find_alloc_or_arg("N").shape() == ()


_RING_REWRITE = '''from exo import *
from exo.platforms.cuda import *
from exo.stdlib.scheduling import *


@proc
def p(K: size):
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            bar: barrier[K @ ring_buffer_by(2), 1] @ CudaMbarrier
            for k in seq(0, K):
                Arrive(cuda_in_order) >> bar[k, 0]
                Await(bar[k, 0], cuda_in_order, 0)


p = divide_loop(p, "k", 2, ["ko", "ki"])
'''


@pytest.mark.rule("DIAL-9")
@pytest.mark.rule("API-2")
@pytest.mark.parametrize("text, code, where, what", [
    (_RING_REWRITE, 3, ":16:5: unsupported[ERR-V11]", "divide_loop"),
    ("from exo.platforms.cuda import *\nfrom exo.platforms.cuda import ManagedRingBufferIdx\n",
     2, ":2:1: static[ERR-P00]", "exo.platforms.cuda.ManagedRingBufferIdx is not part of")])
def test_endgame_construct_not_served_exits_named_and_located(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, code: int, where: str,
        what: str) -> None:
    """Issue 18 "Bad input": an endgame rewrite or name spork-verify does not serve is exit 3
    (unsupported) or 2 (the file fails), naming it at its line, never a traceback."""
    path = tmp_path / "endgame_file.py"
    path.write_text(text)
    assert main([str(path), "--no-progress"]) == code
    out, err = capsys.readouterr()
    assert f"{path}{where}" in out and what in out
    assert "Traceback" not in out + err


@pytest.mark.rule("DIAL-17")
def test_last_use_free_is_endgame_only(tmp_path: Path) -> None:
    """The seeded bug of smem_last_use_bug.py (no Fence between `a`'s last use and `b`'s
    allocation) is refuted at `b`'s line in endgame's dialect and, unchanged but for the
    endgame import, proved in February's (its free stays at the end of the scope)."""
    text = (ENDGAME / "smem_last_use_bug.py").read_text()
    (p,) = load_procs(ENDGAME / "smem_last_use_bug.py")
    result = verify_proc(p)
    assert result.verdict is Verdict.refuted
    (finding,) = result.findings
    assert (finding.variable, finding.loc.line) == ("a", 19)
    assert finding.kind.value == "WAR"
    assert "free_missing_sync HAZARD @ free(a[" in finding.message  # upstream's words
    february = tmp_path / "february.py"
    february.write_text("\n".join(line for line in text.splitlines() if "cuda_tk" not in line))
    (q,) = load_procs(february)
    assert q.dialect == dialects.SPORK26
    assert verify_proc(q).verdict is Verdict.proved


@pytest.mark.rule("DIAL-16")
def test_unrecycled_slot_names_upstreams_element() -> None:
    """The message names the element freed unrecycled as upstream's free_missing_arrive does,
    and the element that was never arrived on; the counterexample is replayed."""
    (p,) = load_procs(ENDGAME / "ring_bug_final_arrive.py")
    result = verify_proc(p)
    assert result.verdict is Verdict.refuted
    (finding,) = result.findings
    assert finding.message.startswith("free_missing_arrive HAZARD @ free(empty[")
    assert "is never arrived on" in finding.message
    assert finding.counterexample is not None and finding.counterexample.replayed


# upstream's test_coll_units.py mkproc_non_const_rmem: registers of a non-constant shard
_RMEM = '''
@proc
def non_const(big: size):
    assert big > 1000
    with CudaDeviceFunction(blockDim=256):
        for task in cuda_tasks(0, 1):
            rmem: f32[4, 4, big] @ CudaRmem
            for x in cuda_threads(0, 4, unit=64 * cuda_thread):
                for y in cuda_threads(0, 4, unit=cuda_thread):
                    for z in seq(0, 16):
                        rmem[x, y, z] = 1337
'''

# another proc of the file naming an endgame-only memory (as test_coll_units.py does)
_UNIFORM = '''
@proc
def uniform():
    with CudaDeviceFunction(blockDim=32):
        for task in cuda_tasks(0, 1):
            r: f32 @ CudaRmemUniform(32)
            pass
'''


@pytest.mark.rule("DIAL-19")
@pytest.mark.parametrize("other, words", [("", "rmem @ CudaRmem requires constant shape"),
                                          (_UNIFORM, "rmem @ CudaRmemLinear requires constant "
                                           "shape")])
def test_message_words_follow_the_file(tmp_path: Path, other: str, words: str) -> None:
    """An unmarked proc is February's (DIAL-1) and says `CudaRmem`; in a file whose code names
    endgame-only names it says endgame's `CudaRmemLinear` (CudaRmem's name there), located at
    the allocation; the rules applied stay February's."""
    path = _write(tmp_path, "from verifier.lang import *\n", _RMEM + other)
    p = {q.name: q for q in load_procs(path)}["non_const"]
    assert p.dialect == dialects.SPORK26
    result = verify_proc(p)
    assert result.verdict is Verdict.rejected
    (finding,) = result.findings
    assert words in finding.message and "big" in finding.message, finding.message
    assert (finding.code, finding.loc.line) == ("ERR-A16", 8)  # rmem: ... @ CudaRmem
