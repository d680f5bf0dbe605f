"""Statement cursors and the rewrites that take them (specs/upstream_api.md API-7):
`insert_fence`, `add_loop`, `set_loop_mode`, with upstream's cursor navigation (`before()`,
`after()`, `prev()`, `next()`, `parent()`) and `p.forward(cursor)` through each rewrite."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from verifier.diagnostics import RejectedInput, Unsupported
from verifier.encode import verify_proc
from verifier.lang.ir import ir
from verifier.load.load import load_procs
from verifier.load.load_isolated import load_isolated

from conftest import REVERSED_TILE_HEAD, ROOT

# without a Fence between its two loops the read races the write (RAW on tile, line 15)
HEAD = REVERSED_TILE_HEAD
TAIL_LINE = len(HEAD.splitlines()) + 1  # the first line of a test's script


def _procs(tmp_path: Path, tail: str) -> dict[str, ir.Proc]:
    """The file's procs by name; of several with one name, the last (the script's result)."""
    path = tmp_path / "k.py"
    path.write_text(HEAD + tail)
    return {p.name: p for p in load_procs(path)}


def _error(tmp_path: Path, tail: str) -> RejectedInput | Unsupported:
    path = tmp_path / "k.py"
    path.write_text(HEAD + tail)
    loaded = load_isolated(path)
    assert loaded.error is not None
    return loaded.error


def _blk(p: ir.Proc) -> ir.For:
    return p.body[0].body[0]


@pytest.mark.rule("API-7")
def test_without_the_fence_the_read_races_the_write(tmp_path: Path) -> None:
    result = verify_proc(_procs(tmp_path, "")["k"])
    assert result.verdict.value == "refuted"
    finding = result.findings[0]
    assert (finding.kind.value, finding.variable, finding.loc.line) == ("RAW", "tile", 15)


@pytest.mark.rule("API-7")
def test_insert_fence_at_a_gap_is_proved(tmp_path: Path) -> None:
    """`loop.before()` of the read loop; the new Fence carries the enclosing statement's
    location (the `blk` loop), as upstream's DoInsertFence; nothing else changes."""
    p = _procs(tmp_path, "k = insert_fence(k, k.find_loop('t #1').before(), cuda_in_order, "
                         "cuda_in_order)\n")["k"]
    blk = _blk(p)
    kinds = [type(s).__name__ for s in blk.body]
    assert kinds == ["Alloc", "For", "Fence", "For", "Fence"]
    fence = blk.body[2]
    assert fence.first.value == fence.second.value == "cuda_in_order"
    assert (fence.loc.line, fence.loc.col) == (blk.loc.line, blk.loc.col) == (10, 9)
    assert verify_proc(p).verdict.value == "proved"


@pytest.mark.rule("API-7")
def test_fence_after_the_read_is_refuted_at_the_read(tmp_path: Path) -> None:
    """Seeded bug: `.after()` of the read loop leaves the race."""
    p = _procs(tmp_path, "k = insert_fence(k, k.find_loop('t #1').after(), cuda_in_order, "
                         "cuda_in_order)\n")["k"]
    assert [type(s).__name__ for s in _blk(p).body] == ["Alloc", "For", "For", "Fence", "Fence"]
    finding = verify_proc(p).findings[0]
    assert (finding.kind.value, finding.variable, finding.loc.line) == ("RAW", "tile", 15)


SCOPED = """loop = k.find_loop('t #1')
k = insert_fence(k, loop.before(), cuda_in_order, cuda_in_order)
fence = k.forward(loop).prev()
k = add_loop(k, fence, "w", {n})
k = set_loop_mode(k, k.forward(fence).parent(), CudaThreads(unit={unit}))
"""


@pytest.mark.rule("API-7")
def test_fence_wrapped_in_a_cta_wide_loop_is_proved(tmp_path: Path) -> None:
    """add_loop wraps the Fence in `seq(0, 1)` at its location; set_loop_mode makes that loop
    a collective of all 256 threads, so the Fence is CTA-wide."""
    p = _procs(tmp_path, SCOPED.format(n=1, unit="256 * cuda_thread"))["k"]
    loop = _blk(p).body[2]
    assert isinstance(loop, ir.For) and loop.iter.name == "w"
    assert loop.lo == ir.Const(0, loop.loc) and loop.hi == ir.Const(1, loop.loc)
    assert isinstance(loop.mode, ir.CudaThreads) and loop.mode.unit.name == "256 * cuda_thread"
    assert isinstance(loop.body[0], ir.Fence) and loop.loc == loop.body[0].loc
    assert loop.loc.line == 10  # the inserted Fence's, which is its enclosing loop's
    assert verify_proc(p).verdict.value == "proved"


@pytest.mark.rule("API-7")
def test_fence_wrapped_in_a_per_warp_loop_is_refuted(tmp_path: Path) -> None:
    """Seeded bug: one Fence per warp orders nothing across warps (the coop GEMM's per-CTA
    fence in a cluster, one level down)."""
    p = _procs(tmp_path, SCOPED.format(n=8, unit="cuda_warp"))["k"]
    assert _blk(p).body[2].mode.unit.name == "cuda_warp"
    finding = verify_proc(p).findings[0]
    assert (finding.kind.value, finding.variable, finding.loc.line) == ("RAW", "tile", 15)


@pytest.mark.rule("API-7")
def test_guarded_add_loop_runs_its_statement_once(tmp_path: Path) -> None:
    """`guard=True` serves a statement with effects (upstream then skips idempotence): the body
    is `if g == 0: s`, so the program is unchanged in effect and still proved."""
    p = _procs(tmp_path, "k = insert_fence(k, k.find_loop('t #1').before(), cuda_in_order, "
                         "cuda_in_order)\n"
                         "k = add_loop(k, k.find_loop('t #1'), 'g', '2', guard=True)\n")["k"]
    loop = _blk(p).body[3]
    assert isinstance(loop, ir.For) and loop.hi == ir.Const(2, loop.loc)
    (guard,) = loop.body
    assert isinstance(guard, ir.If) and guard.cond == ir.BinOp(
        "==", ir.Var(loop.iter, loop.loc), ir.Const(0, loop.loc), loop.loc)
    assert isinstance(guard.body[0], ir.For) and guard.loc.line == loop.loc.line == 14
    assert verify_proc(p).verdict.value == "proved"


@pytest.mark.rule("API-7")
def test_cursor_navigation_and_forwarding(tmp_path: Path) -> None:
    procs = _procs(tmp_path, """tile = k.find_alloc_or_arg("tile")
first = tile.prev()
second = tile.next()
after = second.next()
blk = tile.parent()
top = blk.parent().parent()
k2 = insert_fence(k, tile.before(), cuda_in_order, cuda_in_order)
fence = k2.forward(tile).prev()
k3 = add_loop(k2, fence, "a", 2)
k4 = add_loop(k3, fence, "b", 3)
inner = k4.forward(fence).parent()
k5 = set_loop_mode(k4, inner, CudaTasks)
k6 = rename(set_loop_mode(k5, inner.parent(), Seq(pragma_unroll=1)), "k6")
assert not first and second and after and not top and after.next() and not after.next(2)
assert after.prev(2).node is tile.node and blk.node is k.find_loop("blk")
""")
    k6 = procs["k6"]
    blk = _blk(k6)
    outer = blk.body[0]
    assert (outer.iter.name, outer.hi, outer.mode) == ("a", ir.Const(2, outer.loc),
                                                        ir.Seq(pragma_unroll=1))
    inner = outer.body[0]
    assert (inner.iter.name, inner.hi, inner.mode) == ("b", ir.Const(3, inner.loc),
                                                        ir.CudaTasks())
    assert isinstance(inner.body[0], ir.Fence) and isinstance(blk.body[1], ir.Alloc)
    assert k6.forward(procs["k"].find_alloc_or_arg("tile")).node is blk.body[1]


@pytest.mark.rule("API-7")
def test_cursor_to_nothing_is_invalid() -> None:
    path = ROOT / "tests" / "upstream_style" / "exchange_factory.py"
    p = load_procs(path)[0]
    first = ir.StmtRef(p, p.body[0])
    assert not first.prev() and isinstance(first.prev(), ir.InvalidCursor)
    assert not first.parent() and not first.parent().parent()
    assert not first.next(len(p.body)) and first.next(len(p.body) - 1)


@pytest.mark.rule("API-7")
@pytest.mark.parametrize("tail, kind, words", [
    ("insert_fence(k, k.find_loop('t'), cuda_in_order, cuda_in_order)", "TypeError",
     "argument 1, 'gap_cursor' to insert_fence: expected a GapCursor"),
    ("insert_fence(k, k.find_loop('t').after(), cuda_in_order_instr, cuda_in_order)",
     "TypeError", "expected a Sync_tl, not cuda_in_order_instr: Instr_tl"),
    ("add_loop(k, k.find_loop('t'), 'w', 2)", "ERR-V11",
     "add_loop around the For statement at line 12"),
    ("add_loop(k, k.find_alloc_or_arg('tile').next().next().next(), 'w', 0)", "ERR-P00",
     "The expression 0 is not guaranteed to be greater than 0."),
    ("add_loop(k, k.find_alloc_or_arg('tile').next().next().next(), 'w', 'n')", "ERR-V11",
     "add_loop with the bound 'n'"),
    ("add_loop(k, k.find_alloc_or_arg('tile').next().next().next(), 'w w', 2)", "TypeError",
     "argument 2, 'iter_name' to add_loop: expected a valid name"),
    ("add_loop(k, [k.find_loop('t'), k.find_loop('t #1')], 'w', 2)", "NotImplementedError",
     "TODO: support blocks of size > 1"),
    ("set_loop_mode(k, k.find_alloc_or_arg('tile'), CudaTasks)", "TypeError",
     "expected a ForCursor, not Alloc"),
    ("set_loop_mode(k, k.find_loop('t'), cuda_warp)", "TypeError",
     "argument 2, 'loop_mode' to set_loop_mode: expected a LoopMode"),
    ("k.find_alloc_or_arg('x').before()", "ERR-P00", "x is not a statement of a proc"),
    ("k.find_alloc_or_arg('tile').prev('1')", "ERR-P00", "expected an int distance"),
    ("insert_fence(k, k.find_alloc_or_arg('tile').parent().parent().parent(), cuda_in_order, "
     "cuda_in_order)", "TypeError", "expected a GapCursor"),
    ("set_loop_mode(k, k.find_alloc_or_arg('tile').parent().parent().parent(), Seq)",
     "ERR-P00", "the cursor points to nothing"),
])
def test_misuse_is_located_at_the_call(tmp_path: Path, tail: str, kind: str,
                                       words: str) -> None:
    err = _error(tmp_path, f"q = {tail}\n")
    assert words in err.message, err.message
    assert kind in (err.code, err.message.split("error while running the file: ")[-1]
                    .split(":")[0]), err
    assert err.loc.file.endswith("k.py") and err.loc.line == TAIL_LINE, err.loc


@pytest.mark.rule("API-7")
def test_a_cursor_of_a_replaced_or_copied_statement_is_refused(tmp_path: Path) -> None:
    """A cursor forwards to the same statement, or the loop or allocation with its binder; one
    whose statement a rewrite rebuilt (here the device function around the new Fence), or
    that is there twice (a copy), is refused at the call, never guessed."""
    err = _error(tmp_path, "tile = k.find_alloc_or_arg('tile')\n"
                           "device = tile.parent().parent()\n"
                           "k = insert_fence(k, tile.before(), cuda_in_order, cuda_in_order)\n"
                           "k = set_loop_mode(k, device, Seq)\n")
    assert "no longer has the devicefunction statement at line 9" in err.message, err
    assert (err.code, err.loc.line) == ("ERR-P00", TAIL_LINE + 3)
    k = _procs(tmp_path, "")["k"]
    twice = dataclasses.replace(k, body=k.body + k.body)
    with pytest.raises(LookupError, match="2 times"):
        twice.forward(ir.StmtRef(k, k.body[0]))
    other = load_procs(ROOT / "tests" / "upstream_style" / "exchange_factory.py")[0]
    with pytest.raises(LookupError, match="no longer has"):
        k.forward(ir.StmtRef(other, other.body[0]))


@pytest.mark.rule("API-7")
@pytest.mark.extended  # .ci/run (issue 20: the default run's time budget)
def test_per_cta_fence_before_a_cluster_free_is_refuted(tmp_path: Path) -> None:
    """Program level, the shape of upstream's test_coop_cta_sync_before_epilogue: the 2-CTA
    TMA-multicast GEMM tile (tests/programs_tk/tk_tma_gemm_cluster.py) without its final
    cluster-wide Fence; the script inserts a Fence after the K loop and makes it per CTA
    (`cuda_cta_in_cluster`): the SMEM freed at the end of the task is still being read by the
    other CTA (free_missing_sync on A_s, its allocation at line 25). Made cluster-wide (`2 * cuda_cta_in_cluster`)
    it is proved."""
    source = (ROOT / "tests" / "programs_tk" / "tk_tma_gemm_cluster.py").read_text()
    lines = source.splitlines(keepends=True)
    assert lines[-1].strip() == "Fence(cuda_in_order, cuda_in_order)"
    script = """
loop = tk_tma_gemm_cluster.find_loop("k")
p = insert_fence(tk_tma_gemm_cluster, loop.after(), cuda_in_order, cuda_in_order)
fence = p.forward(loop).next()
p = add_loop(p, fence, "c", {n})
p = set_loop_mode(p, p.forward(fence).parent(), CudaThreads(unit={unit}))
fenced = rename(p, "fenced")
"""
    path = tmp_path / "gemm.py"
    path.write_text("".join(lines[:-1]) + script.format(n=2, unit="cuda_cta_in_cluster"))
    per_cta = {q.name: q for q in load_procs(path)}["fenced"]
    result = verify_proc(per_cta)
    assert result.verdict.value == "refuted"
    finding = result.findings[0]
    assert "free_missing_sync HAZARD @ free(A_s[" in finding.message
    assert (finding.variable, finding.loc.line) == ("A_s", 25)
    path.write_text("".join(lines[:-1]) + script.format(n=1, unit="2 * cuda_cta_in_cluster"))
    cluster = {q.name: q for q in load_procs(path)}["fenced"]
    assert verify_proc(cluster).verdict.value == "proved"
