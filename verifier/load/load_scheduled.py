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

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # not POSIX: no lock, concurrent first builds may race
    fcntl = None  # type: ignore[assignment]

from verifier.diagnostics import RejectedInput, SporkError, SrcLoc, Unsupported
from verifier.load.load import read_source
from verifier.load.load_isolated import (
    DEFAULT_TIMEOUT_S, ChildRun, LoadedFile, crash_frames, load_isolated, no_reply_error,
    remember_source, run_child)
from verifier.load.load_protocol import LoadReply, PrintedProc, Stage, read_frame
from verifier.load.sandbox import Policy
from verifier.results import ScheduledBy

ENV_VAR = "SPORK_VERIFY_EXO_GPU_PYTHON"
JIT_ENV = "CAMSPORK_JIT_DIR"  # where upstream's checker JIT builds (set for its child, SCHED-7)
CHILD = Path(__file__).with_name("exo_gpu_child.py")
MAGIC = b"SPORKEG1"  # exo_gpu_child's frames
PRINTED_MARK = "@exo-gpu/"  # FILE@exo-gpu/PROC.py: the text upstream printed for PROC (SCHED-3)


class ExoGpuUnavailable(Exception):
    """The interpreter named for Exo-GPU cannot run it (no such file, not executable, no
    `exo` there): a usage error, exit 2, never a verdict of the file (SCHED-5)."""


def build_folder(python: str, environ: Mapping[str, str] = os.environ) -> Path:
    """The private folder upstream's child runs in, one per interpreter (SCHED-7): upstream's
    JIT builds its C++ checker there once (ninja keeps its build log in the working folder,
    so a run elsewhere would rebuild it) and never in the caller's folder. Under the cache
    root of CLI-7 ($SPORK_VERIFY_CACHE_DIR, else $XDG_CACHE_HOME/spork-verify, else
    ~/.cache/spork-verify), `exo-gpu/KEY` with KEY a hash of the interpreter's path; a
    temporary folder (a rebuild per run) when that cannot be made."""
    root = Path(environ.get("SPORK_VERIFY_CACHE_DIR") or
                Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "spork-verify")
    key = hashlib.sha256(os.path.abspath(python).encode("utf-8")).hexdigest()[:16]
    folder = root / "exo-gpu" / key
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        folder = Path(tempfile.mkdtemp(prefix="spork-verify-exo-gpu-"))
    return folder


@contextlib.contextmanager
def _first_build_lock(folder: Path) -> Iterator[None]:
    """Until upstream's checker library exists in `folder`, one run at a time builds it
    (concurrent ninja runs in one folder would race); later runs do not wait."""
    if (folder / "jit" / "camspork" / "libcamspork.so").exists() or fcntl is None:
        yield
        return
    with open(folder / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _build_checker(python: str, folder: Path, timeout_s: float) -> None:
    """Build upstream's C++ checker into the cache once, by upstream's own JIT and without the
    user's file (SCHED-7, SEC-3): the cache is never writable by a kernel file, so no file can
    leave a library that a later run of another file would load. A failed build is left to
    the child's run, which then reports upstream's failure as unsupported."""
    if (folder / "jit" / "camspork" / "libcamspork.so").exists():
        return
    env = {k: v for k, v in os.environ.items() if k != JIT_ENV}
    script = ("import sys; from exo.spork.camspork import jit; jit.set_jit_dir(sys.argv[1]); "
              "jit.compile_libcamspork()")
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run([python, "-P", "-c", script, str(folder / "jit")], cwd=folder, env=env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=max(timeout_s, 300), check=False)


def _private_copy(folder: Path) -> Callable[[str], tuple[str | None, dict[str, str]]]:
    """The child works on a copy of the cached build inside its private folder (SCHED-7):
    upstream's JIT finds it current (times kept) and writes only its own copy."""
    def setup(private: str) -> tuple[str | None, dict[str, str]]:
        work = Path(private) / "exo-gpu"
        if (folder / "jit").is_dir():
            shutil.copytree(folder / "jit", work / "jit", symlinks=True)
        else:
            (work / "jit").mkdir(parents=True)
        return str(work), {JIT_ENV: str(work / "jit")}
    return setup


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
                           "abspath": os.path.abspath(path),
                           "policy": policy and policy.as_json()}).encode("utf-8")

    folder = build_folder(python)
    with _first_build_lock(folder):
        _build_checker(python, folder, timeout_s)
    run = run_child(lambda reply, crash: [python, "-P", "-u", str(CHILD), str(reply),
                                          str(crash)], request, timeout_s, start, hidden,
                    setup=_private_copy(folder))
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
    if error and error["kind"] == "upstream":
        file, line, col = error["where"]
        raised = f"{error['raised'][0]}:{error['raised'][1]}"
        return LoadedFile(path, (), _upstream_failed(
            python, f"{error['message']} (raised in upstream's {raised})",
            SrcLoc(file, line, col)), run.output, timings)
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


def _upstream_failed(python: str, what: str, loc: SrcLoc) -> Unsupported:
    """Upstream could not give the program (its JIT, its checker or its rewrites failed, or
    it hung or crashed in its own code): nothing is verified, and the user's file is not
    rejected for it (SCHED-7)."""
    return Unsupported(f"upstream Exo-GPU ({python}) failed while running the file, so there "
                       f"is no program to verify: {what}", loc, code="ERR-V11", rule="SCHED-7")


def _stuck_in_upstream(message: dict[str, Any], run: ChildRun, path: str
                       ) -> tuple[str, SrcLoc] | None:
    """Where a timed-out or crashed child was, when that was upstream's own code (or no
    Python frame of the user's): (`FILE:LINE` or "native code", the user's innermost frame
    below it); None when it was the user's code (LOAD-2, LOAD-7 then apply as for our own
    loader)."""
    if message.get("stage") == "started":
        # the child hung or crashed importing upstream's own package, before the user's file
        # ran (a cold import under load): upstream's failure, never the file's (SCHED-7)
        return "upstream's import of exo.platforms.cuda", SrcLoc(path, 1, 1)
    exo_dir = message.get("exo_dir")
    if message.get("stage") != "running" or not exo_dir:
        return None  # no frame of upstream's to blame
    library = [*message.get("library", ()), str(Path(__file__).resolve().parents[1])]

    def inside(file: str, folder: str) -> bool:
        resolved = os.path.realpath(file)
        return resolved == folder or resolved.startswith(folder + os.sep)

    frames = crash_frames(run.crash_text)  # the most recent call first
    users = [f for f in frames if not f.file.startswith("<") and
             not any(inside(f.file, d) for d in (*library, exo_dir))]
    upstream = [f for f in frames if inside(f.file, exo_dir)]
    if users and (not upstream or frames.index(users[0]) < frames.index(upstream[0])):
        return None
    where = f"{upstream[0].file}:{upstream[0].line}" if upstream else "native code"
    return where, users[0] if users else SrcLoc(path, 1, 1)


def _no_reply(path: str, python: str, message: dict[str, Any], run: ChildRun,
              timeout_s: float) -> SporkError:
    """Why the Exo-GPU child gave no result: it never started (a usage error), upstream's
    own code hung or crashed (SCHED-7), or the file ended, crashed or hung while it ran
    (LOAD-2, LOAD-7)."""
    stage = message.get("stage")
    if stage is None and not run.timed_out:
        raise ExoGpuUnavailable(f"--exo-gpu-python {python}: the interpreter did not start "
                                f"(exit status {run.returncode}); its output: "
                                f"{run.output[-1000:].strip()}")
    stuck = _stuck_in_upstream(message, run, path) if stage != "exiting" else None
    if stuck is not None:
        where, loc = stuck
        what = (f"it did not finish within {timeout_s:g} s (raise --load-timeout) and was in "
                f"{where}" if run.timed_out else f"it crashed (exit status {run.returncode}) "
                f"in {where}")
        return _upstream_failed(python, what, loc)
    reply = None if stage is None else LoadReply(
        Stage.exiting, exit_code=message.get("exit_code"),
        exit_loc=SrcLoc(*message["where"]) if message.get("where") else None) \
        if stage == "exiting" else LoadReply(Stage.started)
    error = no_reply_error(path, reply, run.returncode, run.timed_out, timeout_s,
                           run.crash_loc, run.output)
    error.message = f"while upstream Exo-GPU ({python}) ran the file: {error.message}"
    return error
