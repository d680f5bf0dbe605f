"""Upstream's cursor of an allocation or argument, and the ring annotation it shows (API-1).

`ir.Proc.find_alloc_or_arg` returns an `AllocCursor`; the scheduling rewrites read its `node`.
`ring_buffer_by(d)` is the value of an endgame ring annotation (`n @ ring_buffer_by(d)`, DIAL-2),
here so that a cursor can answer `size_annotation()` without importing the stdlib. This module
imports nothing of `ir` (which imports it): it reads the node's fields by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, NoReturn

from verifier.diagnostics import Unsupported
from verifier.user_files import call_site


@dataclass(frozen=True, slots=True)
class ring_buffer_by:  # noqa: N801 - upstream's spelling, used as `n @ ring_buffer_by(d)`
    """A managed ring-buffer dimension of `depth` physical slots (DIAL-2)."""

    depth: int

    def __post_init__(self) -> None:
        if not isinstance(self.depth, int) or isinstance(self.depth, bool):
            raise TypeError(f"Expected ring_buffer_by.depth to be an int, not {self.depth!r}")
        if self.depth <= 0:
            raise ValueError("Expected ring_buffer_by.depth > 0")

    def __rmatmul__(self, extent: object) -> object:
        """`4 @ ring_buffer_by(3)` evaluated as Python (a dimension written outside a proc)."""
        return RingExtent(extent, self)


@dataclass(frozen=True, slots=True)
class RingExtent:
    """An extent with its ring annotation, as Python evaluates `n @ ring_buffer_by(d)`."""

    extent: object
    annotation: ring_buffer_by


@dataclass(frozen=True, slots=True)
class DimCursor:
    """One dimension of an allocation's or argument's type, as upstream's cursor shows it."""

    extent: Any  # an `ir.Expr`
    annotation: ring_buffer_by | None

    def size_annotation(self) -> ring_buffer_by | None:
        return self.annotation


@dataclass(frozen=True, slots=True)
class AllocCursor:
    """Upstream's cursor of an allocation or argument (`p.find_alloc_or_arg(name)`): its name,
    memory (or barrier mechanism) and dimensions with their size annotations (API-1); the
    rewrites that take it (`delete_buffer`, ...) read `node`."""

    node: Any  # an `ir.Alloc` or `ir.Arg`

    def name(self) -> str:
        return self.node.name.name

    def mem(self) -> Any:
        return self.node.mem

    def shape(self) -> tuple[DimCursor, ...]:
        typ = self.node.typ
        # the ring dimensions of a barrier (DIAL-2) or data ring (DIAL-18)
        rings = ((typ.ring,) if getattr(typ, "ring", None) is not None else ()) + \
            tuple(getattr(typ, "extra_rings", ()))
        depth = {r.dim: r.depth for r in rings}
        return tuple(DimCursor(d, ring_buffer_by(depth[k]) if k in depth else None)
                     for k, d in enumerate(getattr(typ, "shape", ())))

    def __getattr__(self, name: str) -> Callable[..., NoReturn]:
        """Upstream's cursor navigation and queries spork-verify does not serve (`before()`,
        `parent()`, ...): a located `unsupported` when called (API-2), not an AttributeError
        the script would end with (a `blocked` verdict)."""
        if name not in NAVIGATION:
            raise AttributeError(name)

        def navigation(*args: Any, **kwargs: Any) -> NoReturn:
            raise Unsupported(f"not supported by spork-verify: the cursor operation "
                              f"`.{name}()` on {self.name()} (upstream's cursor navigation, "
                              "used with its scheduling rewrites)", call_site(), rule="API-2",
                              code="ERR-V11")
        return navigation

    def ring_guarded_by(self) -> str | None:
        """The name of the barrier a data ring buffer is guarded by (DIAL-18), else None."""
        guard = getattr(self.node.typ, "ring_guard", None)
        return None if guard is None else guard.name


# Upstream's cursor methods that navigate or query the program around an allocation
# (exo's public cursor API); `AllocCursor` answers them with `unsupported` (API-2).
NAVIGATION = frozenset({
    "before", "after", "prev", "next", "parent", "body", "orelse", "expand", "as_block",
    "anchor", "idx", "is_invalid", "proc", "get_root", "move", "is_win", "type", "stmt",
})
