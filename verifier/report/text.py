"""Human-readable output: obligations, counts, one verdict line per proc, then findings as
`file:line:col: kind: message` with the source line and the counterexample."""

from __future__ import annotations


from verifier.report.cex_view import table_lines
from verifier.results import (SYNC_SETTLED_BY, ChainResult, Finding, FindingKind,
                              ObligationResult, ObligationStatus, ProcResult, ScheduledBy,
                              SyncCheckResult, SyncCheckStatus, Verdict, assumed_words)
from verifier.diagnostics import SrcLoc
from verifier.user_files import printable, printable_loc, printable_text, source_line

_MARK = {Verdict.proved: "PROVED", Verdict.refuted: "REFUTED", Verdict.rejected: "REJECTED",
         Verdict.unknown: "UNKNOWN", Verdict.unsupported: "UNSUPPORTED",
         Verdict.vacuous: "VACUOUS", Verdict.no_hazard_at_sizes: "NO HAZARD"}


def verdict_words(r: ProcResult, lower: bool = False) -> str:
    """`PROVED`, `NO HAZARD at n=1024` (a concrete run says at which sizes), ...; `lower`
    lowers the verdict only, never a size's name."""
    mark = _MARK.get(r.verdict, r.verdict.value.upper())
    mark = mark.lower() if lower else mark
    if r.sizes:
        mark += " at " + ", ".join(f"{k}={v}" for k, v in r.sizes)
    elif r.assumptions:  # CLI-11: not every size, only those with the assumed values
        mark += (" for all sizes" if r.verdict is Verdict.proved else "") + \
            f" with {assumed_words(r.assumptions)}"
    return mark


NOT_A_PROOF = "the concrete abstract machine at these sizes only, not a proof"


def _summary(r: ProcResult) -> str:
    """What the run did: obligations and their counts, or the concrete machine's one run."""
    if r.sizes:
        return f"{NOT_A_PROOF} for all sizes"
    counts = {s: sum(1 for o in r.obligations if o.status is s) for s in ObligationStatus}
    summary = ", ".join(f"{n} {s.value}" for s, n in counts.items() if n)
    text = f"{len(r.obligations)} obligations{': ' + summary if summary else ''}"
    rechecked = [o.recheck for o in r.obligations if o.recheck is not None]
    if rechecked:
        agree = sum(1 for c in rechecked if c.answer == "unsat")
        text += f"; {rechecked[0].solver} agrees on {agree}/{len(rechecked)}"
        undecided = sum(1 for c in rechecked if c.answer == "unknown")
        if undecided:
            text += f", {undecided} undecided"
    if r.releases:  # codegen's (CG-R1), after the verdict's counts
        proved = sum(x.proved for x in r.releases)
        text += f"; early releases for codegen: {proved}/{len(r.releases)} proved"
    return text



def _cost(o: ObligationResult) -> str:
    """Wall time, and what decided it: a pruning rule, or the solver's resource units (the
    deterministic budget, issue 11), and a limit that stopped it."""
    how = f"by {o.discharged_by}" if o.discharged_by else f"{o.rlimit:,} units"
    stop = f", stopped by {o.stopped_by}" if o.stopped_by else ""
    return f"{o.time_s:.3f}s, {how}{stop}"

QUOTE_WIDTH = 160  # characters of a source line quoted; a 100 KB line is cut around the column


def _source(loc: SrcLoc) -> str:
    text = source_line(loc.file, loc.line).rstrip()
    if len(text) > QUOTE_WIDTH:
        start = max(0, min(loc.col - 1 - QUOTE_WIDTH // 2, len(text) - QUOTE_WIDTH))
        text = ("..." if start else "") + text[start:start + QUOTE_WIDTH] + \
            ("..." if start + QUOTE_WIDTH < len(text) else "")
    return f"    {loc.line:4d} | {text}" if text else ""


def finding_lines(f: Finding) -> list[str]:
    tag = f.code or f.rule
    lines = [f"{printable_loc(f.loc)}: {f.kind.value}{f'[{tag}]' if tag else ''}: {f.message}"]
    src = _source(f.loc)
    if src:
        lines.append(src)
    for r in f.related:
        if r.loc == f.loc and r.role == "later access":
            continue
        lines.append(f"  {r.role}: {printable_loc(r.loc)}")
        src = _source(r.loc)
        if src:
            lines.append("  " + src)
    c = f.counterexample
    if c is not None:
        sizes = ", ".join(f"{k}={v}" for k, v in sorted(c.sizes.items())) or "(none)"
        how = "by running both procs" if f.kind is FindingKind.chain else \
            "on the abstract machine"
        lines.append(f"  counterexample (replayed {how}: "
                     f"{'yes' if c.replayed else 'NO'}): sizes {sizes}")
        if c.index:
            lines.append(f"    element index: {c.index}")
        for t in c.threads:
            lines.append(f"    threads {t}")
        if c.iterators:
            its = ", ".join(f"{k}={v}" for k, v in sorted(c.iterators.items()))
            lines.append(f"    iterators: {its}")
    if f.hint:
        lines.append(f"  fix: {f.hint}")
    return lines


def chain_lines(c: ChainResult, verbose: bool) -> list[str]:
    """The chain of equivalence (specs/chain.md): `tested` never reads as proved."""
    head = {"proved": "PROVED for all sizes", "tested": "TESTED only (not a proof)"}.get(
        c.status.value, c.status.value.upper())
    lines = [f"  chain vs {c.reference}: {head} ({len(c.obligations)} obligations; "
             f"{c.time_s:.2f}s): {c.message}"]
    if c.tested_sizes:
        lines.append("    tested at sizes " + "; ".join(
            ", ".join(f"{k}={v}" for k, v in sorted(s.items())) for s in c.tested_sizes))
    if verbose:
        lines += [f"    [{o.status.value:>8}] {o.rule:<10} {o.id}  ({o.time_s:.3f}s)"
                  for o in c.obligations]
    return lines


def release_lines(r: ProcResult) -> list[str]:
    """Early releases (specs/codegen.md CG-R1..R3), under -v: codegen's, not the verdict's."""
    lines = []
    for x in r.releases:
        state = "proved" if x.proved else f"not proved: {x.reason}"
        lines.append(f"  early release {x.id} (codegen, not the verdict): {state}")
        lines += [f"    [{o.status.value:>8}] {o.rule:<8} {o.id}  ({_cost(o)})"
                  for o in x.obligations]
    return lines


def scheduled_line(s: ScheduledBy) -> str:
    """Where a proc built by upstream's own rewrites came from (SCHED-6)."""
    return (f"  scheduled by upstream Exo-GPU {s.exo_version} ({s.python}, Python "
            f"{s.python_version}); verified its printed text {s.text_file} "
            f"(sha256 {s.text_sha256[:16]}...)")


def _load_output_lines(r: ProcResult, verbose: bool) -> list[str]:
    """What the file printed while loading: shown under -v, else a one-line note."""
    lines = r.load_output.splitlines()
    if not verbose:
        return [f"{printable(r.file)}: note: the file printed {len(lines)} line(s) while "
                "loading (shown with -v)"]
    return [f"{printable(r.file)}: output while loading:"] + [f"  | {line}" for line in lines]


def to_text(results: list[ProcResult], verbose: bool = False, cex_table: bool = False) -> str:
    """The report; `cex_table` (implied by `verbose`) adds each race's per-thread table."""
    out: list[str] = []
    shown: set[str] = set()
    for r in results:
        if r.load_output and r.file not in shown:
            shown.add(r.file)
            out.extend(_load_output_lines(r, verbose))
        out.append(f"{printable(r.file)}: {r.proc}: {verdict_words(r)} ({_summary(r)}; "
                   f"{r.time_s:.2f}s)")
        if r.scheduled_by is not None:
            out.append(scheduled_line(r.scheduled_by))
        if r.chain is not None:
            out.extend(chain_lines(r.chain, verbose))
        if verbose:
            for o in r.obligations:
                again = f"  [{o.recheck.solver}: {o.recheck.answer}" \
                    f"{' (' + o.recheck.reason + ')' if o.recheck.reason else ''}]" \
                    if o.recheck else ""
                out.append(f"  [{o.status.value:>8}] {o.rule:<8} {o.id}  ({_cost(o)}){again}")
                if o.note:
                    out.append(f"             note: {o.note}")
            out.extend(release_lines(r))
        for f in r.findings:
            out.extend(finding_lines(f))
            if verbose or cex_table:
                out.extend(table_lines(f))
        out.extend(sync_check_line(s) for s in r.sync_checks)
    # names, messages, quoted lines and a file's output never put a control character on the
    # terminal (an ESC would recolour it): each is shown escaped (specs/cli.md CLI-5)
    return "\n".join(printable_text(line) for line in out) + "\n"


def sync_check_line(s: SyncCheckResult) -> str:
    """An in-file `p.sync_check(...)` call and its answer (specs/loading.md SYNC-7)."""
    sizes = ", ".join(f"{k}={v}" for k, v in s.sizes)
    status = s.status.value.upper() if s.status in (SyncCheckStatus.hazard,
                                                    SyncCheckStatus.not_run) else s.status.value
    cert = f", certificate {s.certificate[:16]}" if s.certificate else ""
    return (f"{printable_loc(s.loc)}: {s.proc}.sync_check({sizes}): {status}: {s.message} "
            f"[{SYNC_SETTLED_BY.get(s.settled_by, s.settled_by)}{cert}; {s.time_s:.2f}s]")
