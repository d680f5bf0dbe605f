"""mbarrier transaction counts of TMA loads in the concrete machine (TX-1, SEM-8.6).

A TMA load's elected lane in each issuing CTA expects `ncta * box` bytes on its own mbarrier
(the element of the trailing barrier that CTA owns), in the phase of its own arrive count;
each issuer completes `box` bytes (at the tensor's element size) on the mbarrier of every
destination CTA, in the same phase number — the hardware addresses the same ring slot in each
CTA. A phase completes only when the bytes it expects have arrived: a phase whose expected
and completed byte counts differ either never completes (deadlock) or completes before its
data has landed. The ledger is checked when a phase is consumed (a non-trivial Await retiring
it) and, for phases never awaited, when the barrier is freed.
Non-goals: timing; the machine runs the sequential trace, so a phase's bytes are summed
regardless of when the hardware would deliver them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from typing import Any

from verifier.diagnostics import SrcLoc
from verifier.lang.stdlib.instrs import TmaInfo
from verifier.semantics.state import Finding, Origin

Key = tuple[int, tuple[int, ...], int]  # (barrier instance serial, element, phase)

# bytes per element of each scalar type (the tensor's: what TMA hardware copies)
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "ui8": 1, "ui16": 2,
                 "i32": 4, "R": 4, "exo_f16": 2, "exo_bf16": 2, "float": 4, "double": 8,
                 "int8_t": 1, "uint8_t": 1, "uint16_t": 2, "int32_t": 4}


def tma_bytes(info: TmaInfo, kw: dict[str, Any], base: str) -> tuple[int, int]:
    """TX-1 for one TMA load of `base` elements: (bytes its issuing CTA expects on its own
    mbarrier, as the instr counts them; bytes one issuer delivers to one destination). The
    machine's ledger and the static TMA sites (hence the encoder) both take them from here."""
    box = info.box_elements(kw)
    counted = info.element_bits if isinstance(info.element_bits, int) else \
        8 * ELEMENT_BYTES[kw[info.element_bits]]
    return info.ncta(kw) * box * counted // 8, box * ELEMENT_BYTES[base]


@dataclass
class Entry:
    loc: SrcLoc
    origin: Origin
    expected: int = 0
    completed: int = 0


@dataclass
class TxLedger:
    phases: dict[Key, list[Entry]] = field(default_factory=dict)
    checked: set[Key] = field(default_factory=set)

    def entry(self, key: Key, loc: SrcLoc, origin: Origin) -> Entry:
        entries = self.phases.setdefault(key, [])
        for e in entries:
            if e.loc == loc:
                return e
        entries.append(Entry(loc, origin))
        return entries[-1]

    def expect(self, key: Key, loc: SrcLoc, origin: Origin, nbytes: int) -> None:
        self.entry(key, loc, origin).expected += nbytes

    def complete(self, key: Key, loc: SrcLoc, origin: Origin, nbytes: int) -> None:
        self.entry(key, loc, origin).completed += nbytes

    def check(self, key: Key, name: str, later: Origin | None) -> Finding | None:
        """The phase `key` balanced, or the finding naming its first unbalanced TMA."""
        if key in self.checked or key not in self.phases:
            return None
        self.checked.add(key)
        entries = self.phases[key]
        expected = sum(e.expected for e in entries)
        completed = sum(e.completed for e in entries)
        if expected == completed:
            return None
        culprit = next((e for e in entries if e.expected != e.completed), entries[0])
        _, elem, phase = key
        outcome = "never completes (deadlock)" if expected > completed else \
            "completes before all its bytes have landed"
        return Finding(
            "transaction-count", f"TRANSACTION COUNT MISMATCH @ {name}{list(elem)} phase "
            f"{phase}: expect-tx {expected} bytes, complete-tx {completed} bytes; the phase "
            f"{outcome}", name, elem, culprit.loc, later, culprit.origin,
            sync_hint="the bytes a TMA expects on its mbarrier (ncta x box x 4 for the _2f32 "
                      "instrs) must equal the bytes its copies deliver: use f32 tensors and "
                      "issue every TMA of a phase before its Arrive")

    def open_phases(self, serial: int) -> list[Key]:
        return sorted(k for k in self.phases if k[0] == serial and k not in self.checked)
