"""What the machine reports: findings with the origins of the two accesses (ERR-V01..V09)."""

from __future__ import annotations

from dataclasses import dataclass

from verifier.diagnostics import SrcLoc
from verifier.lang.ir import ir
from verifier.semantics.threads import Threads


class Origin:
    """Where a record came from, for counterexample reports. The iterator values and the
    thread description are rendered on demand: every access creates an origin, few are read."""

    __slots__ = ("loc", "what", "_env", "_hidden", "_threads")

    def __init__(self, loc: SrcLoc, what: str, env: tuple[tuple[ir.Sym, int], ...],
                 hidden: frozenset[ir.Sym], threads: Threads) -> None:
        self.loc = loc
        self.what = what  # "read" / "write-only mutate" / ...
        self._env = env
        self._hidden = hidden
        self._threads = threads

    @property
    def iterators(self) -> tuple[tuple[str, int], ...]:
        return tuple((s.name, v) for s, v in self._env if s not in self._hidden)

    @property
    def threads(self) -> str:
        return self._threads.describe()

    def _key(self) -> tuple[object, ...]:
        return (self.loc, self.what, self.iterators, self.threads)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Origin) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Origin({self.loc}, {self.what!r}, {self.iterators}, {self.threads!r})"


@dataclass(frozen=True, slots=True)
class Finding:
    """A machine error with full context (ERR-V01..V07, V09)."""

    kind: str  # RAW | WAR | WAW | out-of-bounds | barrier-count | deadlock | ring-overrun
    message: str
    variable: str | None
    index: tuple[int, ...]
    loc: SrcLoc
    later: Origin | None
    earlier: Origin | None
    lacking: str = ""
    sync_hint: str = ""
    rule: str = ""  # when the kind's usual rule and code do not name it (e.g. DIAL-10)
    code: str = ""


class MachineError(Exception):
    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.message)
        self.finding = finding
