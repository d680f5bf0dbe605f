"""Load a file, with upstream Exo-GPU's own rewrites when its script needs them (SCHED-*).

`load_file` is the loader the CLI uses: the file runs in spork-verify's loading child
(`load_isolated`); a script that calls a rewrite spork-verify does not reproduce stops there
with ERR-V11 (API-2). When the user names an interpreter with upstream Exo-GPU installed
(`--exo-gpu-python`, SCHED-1), the file is run again in that interpreter (`exo_gpu_child`,
isolated and time-limited as LOAD-6..9), each proc it yields is printed by upstream's printer,
and the texts are parsed by our front end in our loading child (`printed`, SCHED-3). The
printed text is the program verified; each proc records where it came from (SCHED-6).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from verifier.diagnostics import RejectedInput, SporkError, SrcLoc, Unsupported
from verifier.load.load import read_source
from verifier.load.load_isolated import (
    DEFAULT_TIMEOUT_S, ChildRun, LoadedFile, load_isolated, no_reply_error, remember_source,
    run_child)
from verifier.load.load_protocol import LoadReply, PrintedProc, Stage, read_frame
from verifier.load.sandbox import Policy
from verifier.results import ScheduledBy

ENV_VAR = "SPORK_VERIFY_EXO_GPU_PYTHON"
CHILD = Path(__file__).with_name("exo_gpu_child.py")
MAGIC = b"SPORKEG1"  # exo_gpu_child's frames
PRINTED_MARK = "@exo-gpu/"  # FILE@exo-gpu/PROC.py: the text upstream printed for PROC (SCHED-3)


class ExoGpuUnavailable(Exception):
    """The interpreter named for Exo-GPU cannot run it (no such file, not executable, no
    `exo` there): a usage error, exit 2, never a verdict of the file (SCHED-5)."""


def check_python(python: str) -> str:
    """`python` if it names an executable file; else ExoGpuUnavailable saying what is wrong."""
    where = Path(python)
    if not where.exists():
        raise ExoGpuUnavailable(f"--exo-gpu-python {python}: no such file; name the Python "
                                "interpreter of an environment where upstream Exo-GPU is "
                                "installed (e.g. VENV/bin/python)")
    if where.is_dir() or not os.access(where, os.X_OK):
        raise ExoGpuUnavailable(f"--exo-gpu-python {python}: not an executable file; name a "
                                "Python interpreter (e.g. VENV/bin/python)")
    return python


def needs_exo_gpu(error: SporkError | None) -> bool:
    """Whether loading stopped at a rewrite or cursor spork-verify does not reproduce."""
    return isinstance(error, Unsupported) and error.rule == "API-2"


def load_file(path: str, timeout_s: float = DEFAULT_TIMEOUT_S,
              exo_gpu_python: str | None = None, hidden: tuple[str, ...] | None = None
              ) -> LoadedFile:
    """The procs of `path` (specs/loading.md); those of upstream's rewrites when the file's
    script needs them and `exo_gpu_python` is given (SCHED-2). `hidden`: paths the file must
    not read (default: the proof cache's key, SEC-3)."""
    loaded = load_isolated(path, timeout_s, hidden=hidden)
    if exo_gpu_python is None or not needs_exo_gpu(loaded.error):
        return loaded
    return load_by_exo_gpu(path, exo_gpu_python, timeout_s, hidden=hidden)


def printed_file(path: str, name: str, taken: set[str]) -> str:
    """The name the locations in a printed proc carry: `FILE@exo-gpu/NAME.py` (unique)."""
    file, k = f"{path}{PRINTED_MARK}{name}.py", 2
    while file in taken:
        file, k = f"{path}{PRINTED_MARK}{name}-{k}.py", k + 1
    taken.add(file)
    return file


def load_by_exo_gpu(path: str, python: str, timeout_s: float = DEFAULT_TIMEOUT_S,
                    call: str | None = None, hidden: tuple[str, ...] | None = None
                    ) -> LoadedFile:
    """Run `path` under upstream Exo-GPU in `python`, then parse the procs it prints (its
    module-level procs, or those `call`, an expression over the file's names, returns)."""
    start = time.monotonic()
    check_python(python)
    try:
        source = read_source(path)
    except SporkError as e:
        return LoadedFile(path, error=e)
    def request(policy: Policy | None) -> bytes:
        return json.dumps({"path": path, "source": source, "call": call,
                           "policy": policy and policy.as_json()}).encode("utf-8")

    run = run_child(lambda reply, crash: [python, "-P", "-u", str(CHILD), str(reply),
                                          str(crash)], request, timeout_s, start, hidden)
    payload = read_frame(run.reply, MAGIC)
    message: dict[str, Any] = json.loads(payload) if payload is not None else {}
    timings = {"exo_gpu_s": time.monotonic() - start}
    if message.get("stage") != "done":
        return LoadedFile(path, (), _no_reply(path, python, message, run, timeout_s),
                          run.output, timings)
    error = message.get("error")
    if error and error["kind"] == "no-exo":
        raise ExoGpuUnavailable(f"--exo-gpu-python {python}: upstream Exo-GPU cannot be "
                                f"imported there ({error['message']}); name the Python of an "
                                "environment where it is installed")
    if error:
        file, line, col = error["where"]
        return LoadedFile(path, (), RejectedInput(
            f"while upstream Exo-GPU ({python}) ran the file: {error['message']}",
            SrcLoc(file, line, col), rule="SCHED-2", code="ERR-P00"), run.output, timings)
    taken: set[str] = set()
    texts = tuple(PrintedProc(p["name"], p["text"], printed_file(path, p["name"], taken),
                              p["root"]) for p in message["procs"])
    for t in texts:  # the report quotes lines of the text verified
        remember_source(t.file, t.text)
    parsed = load_isolated(path, timeout_s, texts, hidden)
    roots = [t for t in texts if t.root]
    provenance = tuple(ScheduledBy(
        "exo-gpu", python, message["python_version"], message["exo_version"],
        hashlib.sha256(t.text.encode("utf-8")).hexdigest(), t.file) for t in roots)
    timings = {**timings, "total_s": time.monotonic() - start,
               "upstream_run_s": message.get("run_s", 0.0)}
    return dataclasses.replace(parsed, output=run.output + parsed.output, timings=timings,
                               scheduled_by=provenance if parsed.error is None else ())


def _no_reply(path: str, python: str, message: dict[str, Any], run: ChildRun,
              timeout_s: float) -> SporkError:
    """Why the Exo-GPU child gave no result: it never started (a usage error), or the file
    ended, crashed or hung while it ran (LOAD-2, LOAD-7)."""
    stage = message.get("stage")
    if stage is None and not run.timed_out:
        raise ExoGpuUnavailable(f"--exo-gpu-python {python}: the interpreter did not start "
                                f"(exit status {run.returncode}); its output: "
                                f"{run.output[-1000:].strip()}")
    reply = None if stage is None else LoadReply(
        Stage.exiting, exit_code=message.get("exit_code"),
        exit_loc=SrcLoc(*message["where"]) if message.get("where") else None) \
        if stage == "exiting" else LoadReply(Stage.started)
    error = no_reply_error(path, reply, run.returncode, run.timed_out, timeout_s,
                           run.crash_loc, run.output)
    error.message = f"while upstream Exo-GPU ({python}) ran the file: {error.message}"
    return error
