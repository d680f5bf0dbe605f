"""The packed dimensions of a register allocation (LANG-6.4, ERR-A10), as upstream checks them
when it lays out the allocation: after the distributed dimensions are removed (COLL-5.8), the
last n extents are the memory's packed tensor shape, e.g. (64, 256) for
`CudaTkWarpTile(64, 256)`, (2,) for f16 `CudaRmemPacked32`."""

from __future__ import annotations

from verifier.diagnostics import RejectedInput, SrcLoc
from verifier.lang.ir import ir
from verifier.lang.ir.printer import expr_text
from verifier.lang.stdlib.memories import Memory, packed_shape


def check_packed_shape(name: str, mem: Memory, elem: str, shard: tuple[ir.Expr, ...],
                       loc: SrcLoc) -> None:
    """Raise ERR-A10 unless the shard ends in the packed shape. Rules: LANG-6.4"""
    packed = packed_shape(mem, elem)
    if not packed:
        return
    text = f"{name}: {elem}[{', '.join(expr_text(d) for d in shard)}] @ {mem}" if shard \
        else f"{name}: {elem} @ {mem}"
    why = f"(for packed tensor shape {packed})"
    if len(shard) < len(packed):
        problem = f"must be at least {len(packed)}-dimensional {why}"
    else:
        tail = shard[len(shard) - len(packed):]
        values = [d.value if isinstance(d, ir.Const) else None for d in tail]
        if any(v is None for v in values):
            problem = f"Required constant packed tensor shape {why}"
        elif tuple(values) != packed:
            problem = f"{values} packed tensor shape not supported; expect {packed}"
        else:
            return
    raise RejectedInput(f"{text} (distributed dimensions removed) is invalid: {problem}", loc,
                        code="ERR-A10", rule="LANG-6.4", variable=name)


# Memories whose windows upstream cannot pass around (no WindowEncoder): a window argument or
# window statement of one is rejected; instrs take them as arguments directly (TK-1).
NO_WINDOW_FAMILIES = frozenset({"rmem_tk", "rmem_tk_a", "rmem_tk_d"})


def check_window_memory(name: str, mem: object, loc: SrcLoc) -> None:
    """ERR-A10: no window variable of a memory without windows. Rules: LANG-6.4, TK-1"""
    if isinstance(mem, Memory) and mem.family in NO_WINDOW_FAMILIES:
        raise RejectedInput(f"{name} @ {mem}: cannot create a window when the MemWin type "
                            "defines no WindowEncoder (pass the tile to instrs directly)", loc,
                            code="ERR-A10", rule="LANG-6.4", variable=name)


def scalar_access_error(name: str, mem: object, verb: str, loc: SrcLoc
                        ) -> RejectedInput | None:
    """ERR-A01: a ThunderKittens tile or vector is reached only through instrs; an element read,
    write or reduction (`verb`) of one is refused, in upstream's words (by its code generator,
    so after the static rules: the caller reports it late). Rules: LANG-4.2, TK-1"""
    if not (isinstance(mem, Memory) and mem.family in NO_WINDOW_FAMILIES):
        return None
    where = "from" if verb == "read" else "to"
    return RejectedInput(f"cannot {verb} {where} buffer '{name}' in memory '{mem}' (only "
                         "ThunderKittens instrs reach its elements)", loc, code="ERR-A01",
                         rule="LANG-4.2", variable=name)
