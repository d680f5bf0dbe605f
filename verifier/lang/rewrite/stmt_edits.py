"""Three of upstream's rewrites that take statement cursors, reproduced exactly (API-7):
`insert_fence` (a Fence at a gap), `add_loop` (a `seq` loop around one statement) and
`set_loop_mode` (a loop's mode). Each changes one place of the proc and keeps every other
statement (the same nodes, so cursors taken before it still find theirs, cursor.py). Upstream's
checks are reproduced where they decide whether the rewrite happens (a positive loop bound,
an idempotent statement); where spork-verify cannot decide one as upstream does (idempotence
of a statement with effects, a bound that is not a constant), the rewrite is `unsupported`
(API-2), never assumed. Argument errors raise upstream's TypeError words; refusals are
`rejected` (ERR-P00) at the script's call.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from verifier.diagnostics import RejectedInput, SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.ir.cursor import Path, locate, node_at
from verifier.lang.ir.ir import EXO_GPU_HINT
from verifier.lang.stdlib.timelines import InstrTL, QualTL, SyncTL
from verifier.lang.stdlib.units import cuda_thread
from verifier.user_files import call_site

# Statements with no effects in upstream's effect analysis (`stmts_effs`: Pass and its
# SyncStmt, i.e. Fence, Arrive, Await): wrapping one in a loop is idempotent (upstream's
# Check_IsIdempotent holds trivially).
_NO_EFFECTS = (ir.Pass, ir.Fence, ir.Arrive, ir.Await)


def _refuse(message: str, where: SrcLoc) -> RejectedInput:
    return RejectedInput(message, where, rule="API-7", code="ERR-P00")


def _arg_error(op: str, k: int, name: str, message: str) -> TypeError:
    return TypeError(f"argument {k}, '{name}' to {op}: {message}")  # upstream's words


def _path_of(p: ir.Proc, cursor: Any, op: str, where: SrcLoc) -> Path:
    """Where the statement `cursor` names is in `p` (forwarded from an older version)."""
    if isinstance(cursor, ir.InvalidCursor):
        raise _refuse(f"{op}: the cursor points to nothing (an invalid cursor, e.g. `prev()` "
                      "of a first statement)", where)
    node = cursor.node if isinstance(cursor, (ir.StmtRef, ir.AllocCursor)) else \
        cursor.stmt if isinstance(cursor, ir.Gap) else cursor
    if isinstance(node, ir.Arg):
        raise _refuse(f"{op}: {node.name.name} is an argument of {p.name}, not a statement",
                      where)
    try:
        return locate(p, node)
    except LookupError as e:
        raise _refuse(f"{op}: {e}", where) from None


def _edit_block(node: Any, path: Path, edit: Callable[[tuple[Any, ...], int], tuple[Any, ...]]
                ) -> Any:
    """`node` with the block holding `path`'s last step replaced by `edit(block, index)`;
    only the nodes along the path are rebuilt."""
    (name, i), rest = path[0], path[1:]
    block = getattr(node, name)
    if rest:
        block = block[:i] + (_edit_block(block[i], rest, edit),) + block[i + 1:]
    else:
        block = edit(block, i)
    return dataclasses.replace(node, **{name: block})


def _sync_tl(op: str, k: int, name: str, value: Any) -> SyncTL:
    if isinstance(value, SyncTL):
        return value
    if isinstance(value, (QualTL, InstrTL)):
        kind = "Qual_tl" if isinstance(value, QualTL) else "Instr_tl"
        raise _arg_error(op, k, name, f"expected a Sync_tl, not {value.value}: {kind}")
    raise _arg_error(op, k, name, "expected a Sync_tl")


def insert_fence(p: ir.Proc, gap_cursor: Any, first_sync_tl: Any, second_sync_tl: Any
                 ) -> ir.Proc:
    """`s1; s2` at the gap becomes `s1; Fence(first, second); s2`. The Fence carries the
    location of the statement enclosing the gap (the proc's, at top level), as upstream's."""
    where = call_site()
    if not isinstance(gap_cursor, ir.Gap):
        raise _arg_error("insert_fence", 1, "gap_cursor", "expected a GapCursor")
    first = _sync_tl("insert_fence", 2, "first_sync_tl", first_sync_tl)
    second = _sync_tl("insert_fence", 3, "second_sync_tl", second_sync_tl)
    path = _path_of(p, gap_cursor, "insert_fence", where)
    parent = node_at(p, path[:-1])
    fence = ir.Fence(first, second, parent.loc)
    at = path[-1][1] + (gap_cursor.side == "after")
    return _edit_block(p, path, lambda block, _: block[:at] + (fence,) + block[at:])


def _loop_bound(hi: Any, where: SrcLoc, check: bool) -> int:
    """add_loop's bound: a constant (upstream parses a string in the statement's scope;
    spork-verify serves an integer literal), positive as upstream's Check_IsPositiveExpr
    unless the check is off."""
    value = hi
    if isinstance(hi, str) and hi.strip().lstrip("-").isdigit():
        value = int(hi.strip())
    if not isinstance(value, int) or isinstance(value, bool):
        raise Unsupported(f"not supported by spork-verify: add_loop with the bound {hi!r} "
                          "(only a constant bound is reproduced); "
                          f"{EXO_GPU_HINT}", where, rule="API-2", code="ERR-V11")
    if check and value <= 0:
        raise _refuse(f"add_loop: The expression {value} is not guaranteed to be greater "
                      "than 0.", where)
    return value


def add_loop(p: ir.Proc, block_cursor: Any, iter_name: Any, hi_expr: Any, guard: bool = False,
             unsafe_disable_check: bool = False) -> ir.Proc:
    """`s` becomes `for iter_name in seq(0, hi): s` (with `guard`, its body is
    `if iter_name == 0: s`). The loop carries `s`'s location, as upstream's."""
    where = call_site()
    if isinstance(block_cursor, (list, tuple)):
        if len(block_cursor) != 1:
            raise NotImplementedError("TODO: support blocks of size > 1")  # upstream's words
        block_cursor = block_cursor[0]
    if isinstance(block_cursor, str):
        block_cursor = p.find(block_cursor)
    if not isinstance(block_cursor, (ir.StmtRef, ir.AllocCursor, ir.InvalidCursor)) and \
            not isinstance(block_cursor, ir.STMT_TYPES):
        raise _arg_error("add_loop", 1, "block_cursor", "expected a Cursor or pattern string")
    if not isinstance(iter_name, str) or not iter_name.isidentifier():
        raise _arg_error("add_loop", 2, "iter_name", "expected a valid name")
    path = _path_of(p, block_cursor, "add_loop", where)
    stmt = node_at(p, path)
    if not unsafe_disable_check and not guard and not isinstance(stmt, _NO_EFFECTS):
        raise Unsupported(
            f"not supported by spork-verify: add_loop around the {type(stmt).__name__} "
            f"statement at line {stmt.loc.line} (upstream's idempotence check of a statement "
            "with effects is not reproduced: only a Fence, Arrive, Await or pass is served, or "
            f"`guard=True`); {EXO_GPU_HINT}", where, rule="API-2", code="ERR-V11")
    hi = _loop_bound(hi_expr, where, check=not unsafe_disable_check)
    sym = ir.Sym.fresh(iter_name)
    loc = stmt.loc
    body: tuple[ir.Stmt, ...] = (stmt,)
    if guard:
        cond = ir.BinOp("==", ir.Var(sym, loc), ir.Const(0, loc), loc)
        body = (ir.If(cond, body, (), loc),)
    loop = ir.For(sym, ir.Const(0, loc), ir.Const(hi, loc), ir.Seq(), body, loc)
    return _edit_block(p, path, lambda block, i: block[:i] + (loop,) + block[i + 1:])


def _loop_mode(mode: Any) -> ir.LoopMode:
    if mode is ir.CudaThreads:
        return ir.CudaThreads(cuda_thread)  # upstream's default unit
    if isinstance(mode, type):
        try:
            mode = mode()
        except TypeError:
            pass
    if not isinstance(mode, (ir.Seq, ir.Par, ir.CudaTasks, ir.CudaThreads)):
        raise _arg_error("set_loop_mode", 2, "loop_mode", "expected a LoopMode")
    return mode


def set_loop_mode(p: ir.Proc, loop_cursor: Any, loop_mode: Any) -> ir.Proc:
    """The loop at `loop_cursor` with its mode replaced by `loop_mode`, nothing else changed
    (upstream checks nothing here: the static rules check the new loop when the proc is
    verified, as upstream's compile does)."""
    where = call_site()
    mode = _loop_mode(loop_mode)
    if isinstance(loop_cursor, str):
        loop_cursor = p.find_loop(loop_cursor)
    path = _path_of(p, loop_cursor, "set_loop_mode", where)
    loop = node_at(p, path)
    if not isinstance(loop, ir.For):
        raise _arg_error("set_loop_mode", 1, "loop_cursor",
                         f"expected a ForCursor, not {type(loop).__name__}")
    new = dataclasses.replace(loop, mode=mode)
    return _edit_block(p, path, lambda block, i: block[:i] + (new,) + block[i + 1:])
