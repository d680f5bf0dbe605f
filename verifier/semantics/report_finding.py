"""The machine's finding as the report's `Finding` (rule, error code, counterexample): one
conversion for replays, `--sizes` runs and `sync_check` answers, also in the loading child,
which sends it to the verifier as plain data (specs/loading.md SYNC-3)."""

from __future__ import annotations

from verifier.results import Counterexample, Finding, FindingKind, Related
from verifier.semantics.state import Finding as MachineFinding


def machine_finding(f: MachineFinding, sizes: dict[str, int], replayed: bool) -> Finding:
    """`f` at `sizes`; `replayed`: the machine itself found it there (a replayed
    counterexample)."""
    related = []
    if f.earlier is not None:
        related.append(Related(f.earlier.loc, "earlier access"))
    related.append(Related(f.loc, "later access"))
    threads = []
    iterators: dict[str, int] = {}
    if f.earlier is not None:
        threads.append(f"earlier: {f.earlier.threads}")
        iterators.update({f"earlier.{k}": v for k, v in f.earlier.iterators})
    if f.later is not None:
        threads.append(f"later: {f.later.threads}")
        iterators.update({f"later.{k}": v for k, v in f.later.iterators})
    message = f.message
    if f.lacking:
        message += f": {f.lacking}"
    hint = f.sync_hint or ("add a Fence (or Arrive/Await) ordering the two accesses for these "
                           "threads" if f.kind in ("RAW", "WAR", "WAW") else "")
    kind = FindingKind(f.kind)
    rule, code = (f.rule, f.code) if f.code else _RULE_CODE.get(f.kind, ("SEM-4.5", ""))
    if f.kind in ("WAR", "WAW") and "free(" in f.message and not f.code:
        rule, code = "SEM-4.7", "ERR-V04"
    return Finding(kind, message, f.variable, f.loc, tuple(related),
                   Counterexample(dict(sizes), iterators, threads, list(f.index), replayed),
                   rule, code, hint)


_RULE_CODE = {"RAW": ("SEM-4.5", "ERR-V01"), "WAW": ("SEM-4.5", "ERR-V02"),
              "WAR": ("SEM-4.5", "ERR-V03"), "out-of-bounds": ("SEM-4.3", "ERR-V06"),
              "barrier-count": ("SEM-6.6", "ERR-V05"), "deadlock": ("SEM-6.7", "ERR-V07"),
              "ring-overrun": ("SEM-6.8", "ERR-V09"),
              "transaction-count": ("SEM-8.6", "ERR-V10")}
