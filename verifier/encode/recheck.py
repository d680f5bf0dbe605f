"""`--recheck cvc5`: an independent solver re-decides every proved obligation from the very
SMT-LIB2 text z3 proved unsat (the text its query hash is taken of).

Reads a `ProcResult` whose obligations kept their query text (`Options.keep_queries`);
produces the same result with each proved obligation's `Recheck`. cvc5 answering `sat` is a
disagreement between two solvers on one query: the proof is not trusted, the proc becomes
`unknown` with an internal error (exit 4, ERR-V13) naming the obligation. `unknown` (a timeout,
a query cvc5 cannot read) decides nothing and is only reported. cvc5 runs in a child process
(`recheck_child`), so a crash, a hang past the timeout or Ctrl-C inside it costs only that
process. Non-goals: re-deciding refuted obligations (their models are replayed on the machine)
and obligations settled without a solver (`discharged_by` a PR-* rule of specs/verification.md:
there is no query text to re-decide; their soundness argument is the stated rule).
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import subprocess
import sys
import time
from types import TracebackType

from verifier.results import (Finding, FindingKind, ObligationResult, ObligationStatus,
                              ProcResult, Recheck, Verdict)

RECHECK_SOLVERS = ("cvc5",)
# spork-verify is on no package index: installing it by its name finds nothing
INSTALL_CVC5 = ("install spork-verify with its extra `cvc5`: pip install -e '.[cvc5]' in a clone "
                "of spork-verify, or pip install 'dist/spork_verify-VERSION-py3-none-any.whl"
                "[cvc5]' from a built wheel (docs/integrations.md)")
GRACE_S = 5.0  # past its own time limit, a child that has not answered is killed
CODE = "ERR-V13"


class RecheckUnavailable(Exception):
    """The independent solver cannot be started (not installed): a usage error."""


class RecheckSession:
    """One cvc5 child process answering queries in turn; restarted after a crash or a hang."""

    def __init__(self, solver: str, timeout_s: float) -> None:
        if solver not in RECHECK_SOLVERS:
            raise RecheckUnavailable(f"--recheck {solver}: unknown solver; choose one of "
                                     f"{', '.join(RECHECK_SOLVERS)}")
        self.timeout_s = timeout_s
        self.child: subprocess.Popen[bytes] | None = None
        self.pending = b""
        self.name = solver

    def __enter__(self) -> "RecheckSession":
        self._start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop()

    def _start(self) -> None:
        self.child = subprocess.Popen(
            [sys.executable, "-m", "verifier.encode.recheck_child"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        self.pending = b""
        hello = self._line(60.0)
        data = json.loads(hello) if hello else {"error": "the cvc5 process did not start"}
        if "solver" not in data:
            self._stop()
            raise RecheckUnavailable(f"--recheck {self.name}: {data.get('error')}; "
                                     f"{INSTALL_CVC5}")
        self.name = data["solver"]

    def _stop(self) -> None:
        if self.child is not None:
            self.child.kill()
            self.child.wait()
            for stream in (self.child.stdin, self.child.stdout):
                if stream is not None:
                    stream.close()
            self.child = None

    def _line(self, wait_s: float) -> bytes | None:
        """The child's next line, or None if it died or did not answer within `wait_s`."""
        assert self.child is not None and self.child.stdout is not None
        deadline = time.monotonic() + wait_s
        fd = self.child.stdout.fileno()
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return None
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line

    def decide(self, text: str) -> Recheck:
        """The independent solver's answer to one SMT-LIB2 query."""
        if self.child is None:
            self._start()
        assert self.child is not None and self.child.stdin is not None
        start = time.perf_counter()
        request = json.dumps({"text": text, "timeout_ms": int(self.timeout_s * 1000)})
        try:
            self.child.stdin.write(request.encode() + b"\n")
            self.child.stdin.flush()
        except OSError:
            pass  # the child died: reported below as no answer
        line = self._line(self.timeout_s + GRACE_S)
        if line is None:
            code = self.child.poll()
            self._stop()
            why = f"{self.name} crashed (exit {code})" if code is not None else \
                f"no answer within {self.timeout_s + GRACE_S:g} s"
            return Recheck(self.name, "unknown", why, time.perf_counter() - start)
        data = json.loads(line)
        return Recheck(self.name, data["answer"], data["reason"], data["time_s"])


def recheck_result(result: ProcResult, session: RecheckSession) -> ProcResult:
    """`result` with every proved obligation re-decided; a `sat` makes it an internal error."""
    disagreements: list[Finding] = []

    def again(obligations: tuple[ObligationResult, ...]) -> tuple[ObligationResult, ...]:
        out: list[ObligationResult] = []
        for ob in obligations:
            if ob.status is not ObligationStatus.proved or not ob.query:
                out.append(ob)
                continue
            answer = session.decide(ob.query)
            out.append(dataclasses.replace(ob, recheck=answer))
            if answer.answer == "sat":
                assert result.loc is not None
                disagreements.append(Finding(
                    FindingKind.unknown, f"{answer.solver} finds obligation {ob.id} "
                    f"({ob.description}) satisfiable, while z3 proved it unsat (query hash "
                    f"{ob.query_hash}): the two solvers disagree on one query, so this proof is "
                    "not trusted", None, result.loc, rule="SEM-1.1", code=CODE))
        return tuple(out)

    obligations = again(result.obligations)
    # an early release's obligations (CG-R1) back the certificate's layout claim: the same
    releases = tuple(dataclasses.replace(x, obligations=again(x.obligations))
                     for x in result.releases)
    if not disagreements:
        return dataclasses.replace(result, obligations=obligations, releases=releases)
    return dataclasses.replace(result, obligations=obligations, releases=releases,
                               verdict=Verdict.unknown,
                               findings=result.findings + tuple(disagreements),
                               certificate=None, internal_error=True)


__all__ = ["RECHECK_SOLVERS", "RecheckSession", "RecheckUnavailable", "recheck_result"]
