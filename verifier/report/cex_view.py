"""A refuted race's counterexample as events per thread, shared by the table and the picture.

Two lanes (the thread of the earlier access and the thread of the later one) and, in trace order:
the earlier access, the place of the missing synchronization (when a hint placed it), the sync
statements that ran between and did not order the two threads, and the later access.
"""

from __future__ import annotations

from dataclasses import dataclass

from verifier.diagnostics import SrcLoc
from verifier.results import Finding, FindingKind
from verifier.user_files import printable_loc, source_line

_OPS = {FindingKind.RAW: ("write", "read"), FindingKind.WAR: ("read", "write"),
        FindingKind.WAW: ("write", "write")}


@dataclass(frozen=True)
class Event:
    lane: int | None  # 0 earlier thread, 1 later thread, None: a statement between both
    kind: str  # access | sync | missing
    loc: SrcLoc
    text: str


@dataclass(frozen=True)
class CexView:
    title: str
    lanes: tuple[str, str]  # "task 0, thread 64 (blk=0, t=64)"
    events: tuple[Event, ...]
    sizes: str


def source_text(loc: SrcLoc, width: int = 48) -> str:
    text = source_line(loc.file, loc.line).strip()
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= width else text[:width - 3] + "..."


def _lane(f: Finding, role: str) -> str:
    c = f.counterexample
    who = next((t.partition(":")[2].strip() for t in (c.threads if c else ())
                if t.partition(":")[0].strip() == role), "some thread")
    its = ", ".join(f"{k.partition('.')[2]}={v}" for k, v in sorted(c.iterators.items())
                    if k.startswith(role + ".")) if c else ""
    return f"{role}: {who}" + (f" ({its})" if its else "")


def view(f: Finding) -> CexView | None:
    """The view of a race with a counterexample and a known earlier access, else None."""
    earlier = next((r.loc for r in f.related if r.role == "earlier access"), None)
    if f.kind not in _OPS or earlier is None or f.counterexample is None:
        return None
    c = f.counterexample
    element = f"{f.variable}[{', '.join(map(str, c.index))}]"
    first, second = _OPS[f.kind]
    events = [Event(0, "access", earlier, f"{first} {element}")]
    events += [Event(None, "missing", r.loc, "missing sync: insert before this line")
               if r.role == "missing sync" else Event(None, "sync", r.loc, source_text(r.loc, 40))
               for r in f.related if r.role in ("missing sync", "sync between")]  # trace order
    events.append(Event(1, "access", f.loc, f"{second} {element}"))
    sizes = ", ".join(f"{k}={v}" for k, v in sorted(c.sizes.items())) or "none"
    title = f"{f.kind.value} on {element} at {printable_loc(f.loc)}"
    return CexView(title, (_lane(f, "earlier"), _lane(f, "later")), tuple(events), sizes)


def table_lines(f: Finding) -> list[str]:
    """Threads × events (Faial-style), indented for the text report; [] when not a race.

    The middle column holds statements between the two accesses: the sync statements that ran
    and did not order the two threads, and the place where the missing one goes."""
    v = view(f)
    if v is None:
        return []
    header = ("line", v.lanes[0], "between", v.lanes[1])
    rows = []
    for e in v.events:
        cells = ["", "", ""]
        cells[{0: 0, None: 1, 1: 2}[e.lane]] = e.text if e.kind != "missing" else "<- " + e.text
        rows.append((str(e.loc.line), *cells))
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(4)]

    def line(cells: tuple[str, ...]) -> str:
        return "    | " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"

    rule = "    |" + "|".join("-" * (w + 2) for w in widths) + "|"
    return ["  per-thread events (trace order):", line(header), rule, *map(line, rows)]
