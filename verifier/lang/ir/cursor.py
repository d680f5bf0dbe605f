"""Upstream's cursors: of an allocation or argument (API-1), of a statement and of the gap
beside one (API-7), and the ring annotation a dimension shows.

`ir.Proc.find_alloc_or_arg` returns an `AllocCursor`; the scheduling rewrites read its `node`.
A cursor names its statement by the node itself, in the proc it was taken from (`proc`, for
`parent()`, `prev()`, `next()`). A rewrite given a cursor of an older version of its proc finds
the statement again (`locate`, upstream's `forward`): the same node (the rewrites keep every
statement they do not change), else the loop or allocation with the same binder (a rewrite
that changes a loop's mode keeps its iterator). A statement found nowhere or twice is refused
(`LookupError`), never guessed. `ring_buffer_by(d)` is the value of an endgame ring annotation
(`n @ ring_buffer_by(d)`, DIAL-2), here so that a cursor can answer `size_annotation()` without
importing the stdlib. This module imports nothing of `ir` (which imports it): it reads the
node's fields by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, NoReturn

from verifier.diagnostics import RejectedInput, Unsupported
from verifier.user_files import call_site

Path = tuple[tuple[str, int], ...]  # ("body" | "orelse", index) steps from the proc's body


def blocks(node: Any) -> list[tuple[str, tuple[Any, ...]]]:
    """The statement blocks directly inside `node` (a proc or a statement), by field."""
    out = []
    for name in ("body", "orelse"):
        block = getattr(node, name, None)
        if isinstance(block, tuple):
            out.append((name, block))
    return out


def _search(root: Any, match: Callable[[Any], bool]) -> list[Path]:
    found: list[Path] = []

    def walk(node: Any, path: Path) -> None:
        for name, stmts in blocks(node):
            for i, s in enumerate(stmts):
                here = path + ((name, i),)
                if match(s):
                    found.append(here)
                walk(s, here)
    walk(root, ())
    return found


def _binder(node: Any) -> Any:
    """The symbol a loop or allocation binds (which rewrites keep), else None."""
    kind = type(node).__name__
    return node.iter if kind == "For" else node.name if kind == "Alloc" else None


def locate(proc: Any, node: Any) -> Path:
    """Where statement `node` (maybe of an older version of `proc`) is in `proc`."""
    found = _search(proc, lambda s: s is node)
    key = _binder(node)
    if not found and key is not None:
        found = _search(proc, lambda s: type(s) is type(node) and _binder(s) == key)
    what = f"the {type(node).__name__.lower()} statement at line {node.loc.line}" \
        if getattr(node, "loc", None) is not None else type(node).__name__
    if not found:
        raise LookupError(f"{proc.name} no longer has {what} (a rewrite removed or replaced it)")
    if len(found) > 1:
        raise LookupError(f"{what} is in {proc.name} {len(found)} times (a copy of a "
                          "rewrite): the cursor does not say which")
    return found[0]


def node_at(proc: Any, path: Path) -> Any:
    node = proc
    for name, i in path:
        node = getattr(node, name)[i]
    return node


class InvalidCursor:
    """Upstream's cursor to nothing (`prev()` of a first statement, `parent()` of a top-level
    one): false when tested; a rewrite given it refuses it (API-7)."""

    __slots__ = ()

    def __bool__(self) -> bool:
        return False

    def parent(self) -> "InvalidCursor":
        return self

    def __repr__(self) -> str:
        return "InvalidCursor()"


def _misuse(message: str, where: Any) -> NoReturn:
    raise RejectedInput(message, where, rule="API-7", code="ERR-P00")


class _Navigation:
    """`parent()`, `prev()`, `next()`, `before()`, `after()` of the statement `node` of
    `proc`, as upstream's statement cursors answer them (API-7). A misuse is refused at the
    script's call (ERR-P00)."""

    __slots__ = ()
    proc: Any
    node: Any

    def _path(self, op: str, where: Any) -> Path:
        if self.proc is None or type(self.node).__name__ == "Arg":
            _misuse(f"`.{op}()`: {_text(self.node)} is not a statement of a proc (an argument "
                    "has no place among the statements)", where)
        try:
            return locate(self.proc, self.node)
        except LookupError as e:
            _misuse(f"`.{op}()`: {e}", where)

    def parent(self) -> "StmtRef | InvalidCursor":
        path = self._path("parent", call_site())
        return InvalidCursor() if len(path) == 1 else StmtRef(self.proc,
                                                              node_at(self.proc, path[:-1]))

    def _sibling(self, delta: Any, op: str, where: Any) -> "StmtRef | InvalidCursor":
        if not isinstance(delta, int) or isinstance(delta, bool):
            _misuse(f"`.{op}()`: expected an int distance, not {delta!r}", where)
        path = self._path(op, where)
        name, i = path[-1]
        block = getattr(node_at(self.proc, path[:-1]), name)
        j = i + (-delta if op == "prev" else delta)
        return StmtRef(self.proc, block[j]) if 0 <= j < len(block) else InvalidCursor()

    def prev(self, dist: int = 1) -> "StmtRef | InvalidCursor":
        return self._sibling(dist, "prev", call_site())

    def next(self, dist: int = 1) -> "StmtRef | InvalidCursor":
        return self._sibling(dist, "next", call_site())

    def before(self) -> "Gap":
        self._path("before", call_site())
        return Gap(self.node, "before", self.proc)

    def after(self) -> "Gap":
        self._path("after", call_site())
        return Gap(self.node, "after", self.proc)


def _text(node: Any) -> str:
    name = getattr(node, "name", None)
    return getattr(name, "name", type(node).__name__)


@dataclass(frozen=True, slots=True)
class StmtRef(_Navigation):
    """Upstream's cursor of one statement of `proc` (what `parent()`, `prev()`, `next()` and
    `p.forward(...)` of a statement return); rewrites read `node` (API-7)."""

    proc: Any = field(repr=False, compare=False)
    node: Any

    def __bool__(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class Gap:
    """The gap before or after a statement (upstream's `cursor.before()`), API-5, API-7;
    `proc` is the proc it was taken from when known."""

    stmt: Any
    side: str
    proc: Any = field(default=None, repr=False, compare=False)


def forward_cursor(proc: Any, cursor: Any) -> Any:
    """`cursor`, taken from `proc` or an older version of it, as a cursor of `proc`
    (upstream's `proc.forward(cursor)`); LookupError when `proc` no longer has it."""
    if isinstance(cursor, InvalidCursor):
        raise LookupError("cannot forward an invalid cursor (a cursor to nothing)")
    if isinstance(cursor, Gap):
        return Gap(node_at(proc, locate(proc, cursor.stmt)), cursor.side, proc)
    if isinstance(cursor, AllocCursor):
        return AllocCursor(node_at(proc, locate(proc, cursor.node)), proc)
    node = cursor.node if isinstance(cursor, StmtRef) else cursor
    return StmtRef(proc, node_at(proc, locate(proc, node)))


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
class AllocCursor(_Navigation):
    """Upstream's cursor of an allocation or argument (`p.find_alloc_or_arg(name)`): its name,
    memory (or barrier mechanism) and dimensions with their size annotations (API-1), and an
    allocation's place among the statements of `proc` (API-7); the rewrites that take it
    (`delete_buffer`, ...) read `node`."""

    node: Any  # an `ir.Alloc` or `ir.Arg`
    proc: Any = field(default=None, repr=False, compare=False)

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
        """Upstream's cursor navigation and queries spork-verify does not serve (`body()`,
        `expand()`, ...): a located `unsupported` when called (API-2), not an AttributeError
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
# (exo's public cursor API) other than API-7's; `AllocCursor` answers them with `unsupported`
# (API-2).
NAVIGATION = frozenset({
    "body", "orelse", "expand", "as_block", "anchor", "idx", "is_invalid", "get_root", "move",
    "is_win", "type", "stmt",
})
