"""Upstream's scheduling operations, as scripts call them before verification (API-1, API-2).

`rename`, `set_precision` and `delete_buffer` are reproduced exactly (they change a name, an
element type, or drop an unused allocation: the program's accesses are unchanged or gone), and
`replace` of a copy nest by a copy instr (`replace_copy`); `insert_fence`, `add_loop` and
`set_loop_mode` in `stmt_edits` (API-7).
`simplify` lives in `procs`. Every other operation of upstream's `exo.stdlib.scheduling` is a
real rewrite of the program that spork-verify does not reproduce: calling one raises
`Unsupported` naming it, so the file's result says which (never a silently unscheduled proc).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from verifier.diagnostics import RejectedInput, Unsupported
from verifier.user_files import call_site
from verifier.lang.ir import ir
from verifier.lang.ir.ir import EXO_GPU_HINT


def rename(p: ir.Proc, name: str) -> ir.Proc:
    """A copy of `p` called `name` (API-1)."""
    if not isinstance(name, str) or not name.isidentifier():
        raise RejectedInput(f"rename({p.name}, {name!r}): the new name must be a Python "
                            "identifier", rule="API-1", code="ERR-P00")
    return dataclasses.replace(p, name=name)


def _target(p: ir.Proc, cursor: Any, op: str) -> ir.Alloc | ir.Arg:
    if isinstance(cursor, str):
        try:
            return p.find_alloc_or_arg(cursor.split("[")[0].strip()).node
        except LookupError as e:
            raise RejectedInput(f"{op}: {e}", rule="API-1", code="ERR-P00") from None
    if isinstance(cursor, ir.AllocCursor):
        return cursor.node
    if isinstance(cursor, (ir.Alloc, ir.Arg)):
        return cursor
    raise RejectedInput(f"{op}: expected a buffer name or `p.find_alloc_or_arg(name)`, not "
                        f"{type(cursor).__name__}", rule="API-1", code="ERR-P00")


def _replace_nodes(node: Any, change: Callable[[Any], Any]) -> Any:
    """`node` with every IR node for which `change` returns a new value replaced by it;
    tuples of statements are spliced when `change` returns a tuple."""
    new = change(node)
    if new is not node:
        return new
    if isinstance(node, tuple):
        out: list[Any] = []
        for x in node:
            y = _replace_nodes(x, change)
            out.extend(y if isinstance(y, tuple) and not isinstance(x, tuple) else (y,))
        return tuple(out) if any(a is not b for a, b in zip(out, node)) or \
            len(out) != len(node) else node
    if dataclasses.is_dataclass(node) and not isinstance(node, type) and \
            type(node).__module__ == ir.__name__:
        changes = {f.name: _replace_nodes(getattr(node, f.name), change)
                   for f in dataclasses.fields(node)}
        changes = {k: v for k, v in changes.items() if v is not getattr(node, k)}
        return dataclasses.replace(node, **changes) if changes else node
    return node


def _retyped(typ: ir.Type, precision: str) -> ir.Type:
    if isinstance(typ, ir.Tensor):
        return dataclasses.replace(typ, base=precision)
    if isinstance(typ, ir.Scalar):
        return ir.Scalar(precision)
    raise RejectedInput(f"set_precision: {typ} is not a data type", rule="API-1",
                        code="ERR-P00")


def set_precision(p: ir.Proc, cursor: Any, typ: Any) -> ir.Proc:
    """`p` with the element type of one argument or allocation set to `typ` (API-1)."""
    precision = typ if isinstance(typ, str) else getattr(typ, "name", str(typ))
    if precision not in ir.SCALAR_TYPES:
        raise RejectedInput(f"set_precision: unknown precision {precision!r} (one of "
                            f"{', '.join(ir.SCALAR_TYPES)})", rule="API-1", code="ERR-P00")
    target = _target(p, cursor, "set_precision")

    def change(node: Any) -> Any:
        if isinstance(node, (ir.Alloc, ir.Arg)) and node.name == target.name:
            return dataclasses.replace(node, typ=_retyped(node.typ, precision))
        return node
    return _replace_nodes(p, change)


def _uses(node: Any, sym: ir.Sym, skip: Any) -> bool:
    if node is skip:
        return False
    if node == sym and isinstance(node, ir.Sym):
        return True
    if isinstance(node, tuple):
        return any(_uses(x, sym, skip) for x in node)
    if dataclasses.is_dataclass(node) and not isinstance(node, type) and \
            type(node).__module__ == ir.__name__:
        return any(_uses(getattr(node, f.name), sym, skip) for f in dataclasses.fields(node))
    return False


def delete_buffer(p: ir.Proc, cursor: Any) -> ir.Proc:
    """`p` without an allocation nothing uses (API-1); a used one is refused, as upstream."""
    target = _target(p, cursor, "delete_buffer")
    if isinstance(target, ir.Arg):
        raise RejectedInput(f"delete_buffer: {target.name} is an argument of {p.name}, not an "
                            "allocation", rule="API-1", code="ERR-P00")
    if _uses(p.body, target.name, target):
        raise RejectedInput(f"delete_buffer: {target.name} is still used in {p.name}; remove "
                            "its uses first", rule="API-1", code="ERR-P00",
                            variable=target.name.name)
    return _replace_nodes(p, lambda n: () if n is target else n)


# Upstream's scheduling operations that rewrite the program (exo.stdlib.scheduling and
# exo.stdlib.stdlib). Each is served as a function raising `Unsupported` (API-2).
REWRITES = (
    "insert_pass", "delete_pass", "reorder_stmts", "rewrite_expr", "bind_expr", "commute_expr",
    "left_reassociate_expr", "extract_subproc", "inline", "call_eqv",
    "insert_noop_call", "insert_barrier_alloc", "insert_arrive", "insert_await",
    "set_trailing_barrier_expr", "set_window", "set_memory", "bind_config", "delete_config",
    "write_config", "expand_dim", "resize_dim", "rearrange_dim", "divide_dim", "mult_dim",
    "sink_alloc", "lift_alloc", "reuse_buffer", "stage_mem", "unroll_buffer",
    "parallelize_loop", "update_loop_mode", "divide_with_recompute",
    "divide_loop", "mult_loops", "join_loops", "shift_loop", "reorder_loops",
    "merge_writes", "split_write", "fold_into_reduce", "inline_assign", "lift_reduce_constant",
    "fission", "fuse", "remove_loop", "unsafe_remove_if", "wrap_with_context",
    "add_if", "unroll_loop", "lift_scope", "eliminate_dead_code", "specialize",
    "add_unsafe_guard", "autofission", "autolift_alloc", "make_instr", "repeat",
    "auto_stage_mem", "tile_loops", "unroll_loops", "cleanup", "hoist_stmt", "jam_stmt",
)


def _rewrite(name: str) -> Callable[..., ir.Proc]:
    def op(*args: Any, **kwargs: Any) -> ir.Proc:
        raise Unsupported(f"not supported by spork-verify: the scheduling operation {name} "
                          f"(a rewrite of the program that spork-verify does not reproduce); "
                          f"{EXO_GPU_HINT}", call_site(), rule="API-2", code="ERR-V11")
    op.__name__ = op.__qualname__ = name
    return op


UNSUPPORTED_REWRITES: dict[str, Callable[..., ir.Proc]] = {n: _rewrite(n) for n in REWRITES}
globals().update(UNSUPPORTED_REWRITES)  # bound by name, so they pickle as references (LOAD-9)
