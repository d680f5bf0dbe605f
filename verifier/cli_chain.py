"""The chain of equivalence in the CLI (specs/chain.md, CHAIN-9): which reference a proc is
compared with, and how the chain result joins the proc's verdict and certificate."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from verifier.diagnostics import RejectedInput
from verifier.lang.ir import ir
from verifier.results import ChainResult, ChainStatus, ProcResult, Verdict
from verifier.user_files import source_lines

_DIRECTIVE = re.compile(r"^#\s*spork-verify:\s*against\s+(?:(?P<proc>\w+)\s*=\s*)?"
                        r"(?P<ref>\S+:\w+)\s*$")


def named_references(path: str) -> dict[str | None, str]:
    """`# spork-verify: against [PROC=]REF.py:NAME` lines of a kernel file: proc name (None
    for every proc) to reference. Read from the text that was loaded (linecache, LOAD-1), not
    the path again: a pipe is read once, and a file edited meanwhile is not the one verified.
    Rules: CHAIN-9.1"""
    out: dict[str | None, str] = {}
    for line in source_lines(path):
        m = _DIRECTIVE.match(line.strip())
        if m:
            out[m["proc"]] = m["ref"]
    return out


CHAIN_TIMEOUT_S = 300.0  # wall-clock safety net per chain query without --timeout (CHAIN-4)


def with_chain(result: ProcResult, p: ir.Proc, reference: str, base: Path | None,
               timeout_s: float | None) -> ProcResult:
    """`result` with the chain against `reference` added: a confirmed difference makes the
    proc refuted; a proved proc's certificate records the chain. Rules: CHAIN-9.2, CHAIN-9.4"""
    from verifier.chain.check import check_chain

    if result.verdict is Verdict.rejected or result.internal_error:
        return result
    try:
        chain, finding = check_chain(p, reference, base, timeout_s or CHAIN_TIMEOUT_S)
    except RejectedInput as e:
        from verifier.encode.verify import static_finding

        return dataclasses.replace(result, verdict=Verdict.rejected,
                                   findings=result.findings + (static_finding(e),),
                                   certificate=None)
    verdict, findings, cert = result.verdict, result.findings, result.certificate
    if chain.status is ChainStatus.refuted:
        verdict, cert = Verdict.refuted, None
    if finding is not None:
        findings = findings + (finding,)
    if cert is not None:
        cert = dataclasses.replace(cert, chain=chain.summary())
    return dataclasses.replace(result, verdict=verdict, findings=findings, certificate=cert,
                               chain=chain, time_s=result.time_s + chain.time_s)


def unchecked_chain(result: ProcResult, reference: str) -> ProcResult:
    """A kernel file's `# spork-verify: against` line under `--assume`: the chain is proved for
    all sizes, not for the assumed ones, so it is `unsupported` there, said, never skipped
    (an explicit --against is a usage error). Rules: CLI-11, CHAIN-9.3"""
    if result.verdict is Verdict.rejected or result.internal_error:
        return result
    chain = ChainResult(reference, ChainStatus.unsupported, "the chain of equivalence is not "
                        "checked under --assume (CLI-11): drop --assume to check it")
    return dataclasses.replace(result, chain=chain)
