"""Run many fuzz-corpus files through the CLI in one process (tests/test_fuzz.py, CLI-6).

`python tests/fuzz_batch.py RESULTS.jsonl FILE...`: for each FILE, `spork-verify FILE` as
`verifier.cli.main` runs it, except that the file is loaded in this process (`load.run_file`,
the very code the loading child runs) instead of a child interpreter per file, which is what
makes a few hundred files cheap. Each file gets 30 s (SIGALRM), stretched by the load per core;
one JSON line per file says its exit code, whether a traceback was printed, how long it took
and the end of its output.

Only generated files go through here: they are examples bent by bytes, encodings and imports,
not programs that kill, hang or rewire the process that runs them (the hand-written `hand_*`
files are, and run one isolated child each, as the CLI runs every file).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from verifier import cli  # noqa: E402
from verifier.diagnostics import RejectedInput, SporkError, SrcLoc  # noqa: E402
from verifier.load import load, load_isolated, load_scheduled  # noqa: E402

from process_support import stop_limit_s  # noqa: E402

LIMIT_S = 30  # per file: more is a hang (CLI-6)


class Hang(BaseException):
    """Raised by SIGALRM: the file took longer than LIMIT_S."""


def load_here(path: str, timeout_s: float = 0.0, printed: Any = (), hidden: Any = None) -> Any:
    """`load_isolated` without the child (so without its confinement, SEC-2: the corpus is
    the project's own): read, run, collect, every failure a SporkError."""
    try:
        source = load.read_source(path)
    except SporkError as e:
        return load_isolated.LoadedFile(path=path, error=e)
    load_isolated.remember_source(path, source)
    try:
        procs = tuple(load.module_procs(load.run_file(path, source)))
    except SporkError as e:
        return load_isolated.LoadedFile(path=path, error=e)
    except Exception as e:  # as the child reports an exception escaping the file (LOAD-2)
        return load_isolated.LoadedFile(path=path, error=RejectedInput(
            load.exit_message(e), load.user_location(e.__traceback__, SrcLoc(path, 1, 1)),
            code="ERR-P00", rule="LOAD-2"))
    return load_isolated.LoadedFile(path=path, procs=procs)


def _expire(signum: int, frame: Any) -> None:
    raise Hang


def verify(path: str) -> dict[str, Any]:
    out = io.StringIO()
    start = time.monotonic()
    signal.signal(signal.SIGALRM, _expire)
    limit_s = stop_limit_s(LIMIT_S)
    signal.alarm(math.ceil(limit_s))
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = cli.main([path, "--timeout", "2", "--load-timeout", "3", "--no-progress"])
    except Hang:
        code = -1
    finally:
        signal.alarm(0)
    text = out.getvalue()
    return {"file": Path(path).name, "code": code, "seconds": round(time.monotonic() - start, 3),
            "limit_s": limit_s,
            "traceback": "Traceback" in text, "located": path in text or "no @proc" in text,
            "tail": text[-1500:]}


def main(argv: list[str]) -> int:
    load_scheduled.load_isolated = load_here  # the CLI's loader, without the child process
    with open(argv[0], "w", encoding="utf-8") as results:
        for path in argv[1:]:
            results.write(json.dumps(verify(path)) + "\n")
            results.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
