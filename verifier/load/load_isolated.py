"""Load a user file in a child process (specs/loading.md, LOAD-6..LOAD-9).

The user's file runs in its own interpreter (`load_child`), under a time limit, with its
stdout and stderr captured apart from the report; the IR comes back pickled and every verdict
is computed here from it. Whatever the file does while loading (exit, crash, hang, print, start
processes) ends as a located `SporkError` in `LoadedFile.error`, never as this process's exit.
"""

from __future__ import annotations

import contextlib
import functools
import linecache
import os
import pickle
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Callable

import verifier
from verifier.diagnostics import InternalError, RejectedInput, SporkError, SrcLoc
from verifier.lang.ir import ir
from verifier.load.load import is_user_file, read_source
from verifier.load.source import python_lines
from verifier.load.load_protocol import (
    LoadReply, LoadRequest, PrintedProc, Stage, read_reply)
from verifier.load.sandbox import (
    Policy, filters_syscalls, landlock_abi, make_undumpable, on_linux)
from verifier.load.sync_record import SyncCall
from verifier.locations import key_file
from verifier.results import Isolation, ScheduledBy

DEFAULT_TIMEOUT_S = 120.0
OUTPUT_LIMIT = 64 * 1024  # bytes of the file's output kept; the rest is counted, not stored
_DUMP_WAIT_S = 0.5  # how long a timed-out child gets to write its traceback
_END_GRACE_S = 5.0  # how long the supervisor gets to end the file's processes (SEC-4)
_FRAME = re.compile(r'^\s*File "(?P<file>.+)", line (?P<line>\d+)')


@dataclass(frozen=True)
class LoadedFile:
    """What loading one file gave: its procs, or why there are none, and what it printed."""

    path: str
    procs: tuple[ir.Proc, ...] = ()
    error: SporkError | None = None
    output: str = ""  # stdout and stderr of the file while it loaded, interleaved
    timings: dict[str, float] = field(default_factory=dict)  # total_s, startup_s, run_s
    scheduled_by: tuple[ScheduledBy, ...] = ()  # per proc, when Exo-GPU built them (SCHED-6)
    sync_calls: tuple[SyncCall, ...] = ()  # the file's own sync_check calls (SYNC-1)


class _OutputReader(threading.Thread):
    """Drains the child's output pipe so the child never blocks; keeps the first bytes."""

    def __init__(self, stream: IO[bytes]) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.kept = bytearray()
        self.dropped = 0

    def run(self) -> None:
        while chunk := self.stream.read1(65536):  # type: ignore[attr-defined]
            room = OUTPUT_LIMIT - len(self.kept)
            self.kept += chunk[:room]
            self.dropped += max(0, len(chunk) - room)

    def text(self) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        return text + (f"\n[... {self.dropped} more bytes not kept]\n" if self.dropped else "")


# The child imports this very verifier package (not another install), then takes its folder
# off sys.path again, so the user's `import examples` or `import tests` never finds ours.
# `p.sync_check(...)` in the file is recorded (SYNC-1); its size check and, where the file
# could catch its exception, the machine live in verifier.semantics, which load may not
# import: the boot hands the recorder that module, imported on first use.
_BOOT = ("import sys, importlib; sys.path.insert(0, sys.argv[1]); "
         "from verifier.load import sync_record; sync_record.install(lambda: "
         "importlib.import_module('verifier.semantics.sync_check')); "
         "from verifier.load.load_child import main; del sys.path[0]; main(sys.argv[2:])")


def crash_frames(text: str) -> list[SrcLoc]:
    """The frames of a faulthandler traceback, the most recent call first."""
    return [SrcLoc(m["file"], int(m["line"]), 1) for m in map(_FRAME.match, text.splitlines())
            if m]


def _crash_location(text: str) -> SrcLoc | None:
    """The innermost user frame of the faulthandler traceback, if the child wrote one."""
    return next((f for f in crash_frames(text) if is_user_file(f.file)), None)


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    """End the child: SIGTERM asks its supervisor to kill every process the file left
    (SEC-4); SIGKILL to its process group if it has not ended within a grace period."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if child.poll() is None:
            os.kill(child.pid, signal.SIGTERM)
    try:
        child.wait(timeout=_END_GRACE_S)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def no_reply_error(path: str, reply: LoadReply | None, returncode: int, timed_out: bool,
                   timeout_s: float, crash_loc: SrcLoc | None, output: str) -> SporkError:
    where = crash_loc or SrcLoc(path, 1, 1)
    if timed_out:
        return RejectedInput(f"loading the file did not finish within {timeout_s:g} s (an "
                             "endless loop? raise the limit with --load-timeout SECONDS)",
                             where, code="ERR-P00", rule="LOAD-7")
    if reply is None:
        return InternalError("the loading process failed before it ran the file (exit status "
                             f"{returncode}); its output: {output[-2000:]}", SrcLoc(path, 0, 0))
    if reply.stage is Stage.exiting:
        return RejectedInput(f"the file called os._exit({reply.exit_code}) while loading; a "
                             "kernel file must not end the process", reply.exit_loc or where,
                             code="ERR-P00", rule="LOAD-2")
    if returncode < 0:
        return RejectedInput(f"the loading process died of {_signal_name(-returncode)} while "
                             "running the file (a crash in native code?)", where,
                             code="ERR-P00", rule="LOAD-2")
    return RejectedInput(f"the loading process ended with exit status {returncode} while "
                         "running the file", where, code="ERR-P00", rule="LOAD-2")


@dataclass(frozen=True)
class ChildRun:
    """How one isolated child ended: its status, its output, the bytes of its reply file."""

    returncode: int
    timed_out: bool
    output: str
    reply: bytes
    crash_loc: SrcLoc | None
    crash_text: str = ""  # faulthandler's dump (a crash, or where a timed-out child was)


Command = Callable[[int, int], list[str]]  # (reply fd, crash fd) -> the child's argv
Request = Callable[[Policy | None], bytes]  # the confinement -> the request on its stdin
_RUNNING: set[subprocess.Popen[bytes]] = set()  # children running now, for Ctrl-C elsewhere


def kill_loading_children(force: bool = False) -> None:
    """End every loading child running now, and what it started (LOAD-6): for a caller that
    loads in another thread, where Ctrl-C does not reach `run_child`'s own cleanup. SIGTERM
    asks each supervisor to kill every process its file left (SEC-4); `force`: SIGKILL to
    each process group."""
    for child in list(_RUNNING):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if force:
                os.killpg(child.pid, signal.SIGKILL)
            else:
                os.kill(child.pid, signal.SIGTERM)


@functools.cache
def isolation() -> Isolation:
    """How loading children are confined on this machine (SEC-2, SEC-5): probed once."""
    return Isolation(landlock_abi(), filters_syscalls())


def hidden_paths() -> tuple[str, ...]:
    """What no kernel file may read: the proof cache's key (SEC-3, SEC-7)."""
    return (str(key_file()),)


Setup = Callable[[str], tuple[str | None, dict[str, str]]]  # private folder -> (cwd, env)


def run_child(command: Command, request: Request, timeout_s: float, start: float,
              hidden: tuple[str, ...] | None = None, setup: Setup | None = None) -> ChildRun:
    """Run a child with `request` on its stdin in its own session, under the time limit
    (LOAD-7), its stdout and stderr drained apart (LOAD-8), its reply written to a file of its
    own (LOAD-9), confined to a private temporary folder with `hidden` unreadable (SEC-2,
    SEC-3); every process it leaves is ended when it ends (LOAD-6, SEC-4). `setup`, given
    the private folder, prepares what the child may work on there and names its working
    folder and extra environment (SCHED-7); by default the caller's folder."""
    make_undumpable()  # SEC-3: other processes of this user cannot read our memory
    with tempfile.TemporaryFile() as reply_file, tempfile.TemporaryFile() as crash_file, \
            tempfile.TemporaryDirectory(prefix="spork-load-",
                                        ignore_cleanup_errors=True) as private:
        fds = (reply_file.fileno(), crash_file.fileno())
        hidden = hidden_paths() if hidden is None else hidden
        found = isolation()  # without Landlock, still the seccomp filter and the supervisor
        policy = Policy((private,), hidden, found.landlock_abi) if on_linux() else None
        env = {**os.environ, "TMPDIR": private, "TEMP": private, "TMP": private}
        cwd, extra = setup(private) if setup is not None else (None, {})
        env.update(extra)
        child = subprocess.Popen(
            command(*fds), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, pass_fds=fds, start_new_session=True, cwd=cwd, env=env)
        reader = _OutputReader(child.stdout)  # type: ignore[arg-type]
        reader.start()
        timed_out = False
        _RUNNING.add(child)
        try:
            try:
                assert child.stdin is not None
                child.stdin.write(request(policy))
                child.stdin.close()
            except BrokenPipeError:
                pass  # the child died at start; its status says why
            try:
                child.wait(timeout=max(0.0, timeout_s - (time.monotonic() - start)))
            except subprocess.TimeoutExpired:
                timed_out = True
                with contextlib.suppress(ProcessLookupError):
                    os.kill(child.pid, signal.SIGUSR1)  # faulthandler: where is it stuck?
                time.sleep(_DUMP_WAIT_S)
        finally:
            _kill_group(child)  # also on Ctrl-C; and processes the file left running
            _RUNNING.discard(child)
        reader.join(timeout=1.0)  # a process that left our group may still hold the pipe
        if not reader.is_alive():
            child.stdout.close()  # type: ignore[union-attr]
        size = os.fstat(fds[0]).st_size
        reply = os.pread(fds[0], size, 0) if size else b""
        crash_file.seek(0)
        dump = crash_file.read().decode("utf-8", errors="replace")
        return ChildRun(child.returncode, timed_out, reader.text(), reply,
                        _crash_location(dump), dump)


def remember_source(path: str, source: str) -> None:
    """The report quotes the text that was verified, also for a pipe, a file edited meanwhile,
    or a text Exo-GPU printed (SCHED-3)."""
    linecache.cache[path] = (len(source), None, python_lines(source), path)


def _verifier_child(reply_fd: int, crash_fd: int) -> list[str]:
    return [sys.executable, "-P", "-u", "-c", _BOOT,
            str(Path(verifier.__file__).resolve().parent.parent), str(reply_fd), str(crash_fd)]


def load_isolated(path: str | Path, timeout_s: float = DEFAULT_TIMEOUT_S,
                  printed: tuple[PrintedProc, ...] = (), hidden: tuple[str, ...] | None = None
                  ) -> LoadedFile:
    """Run the file in a child interpreter and return its procs (or why loading failed).
    With `printed` (SCHED-3), the child parses those proc texts instead of running the file;
    `hidden`: paths the file must not read (default: the proof cache's key, SEC-3)."""
    path = str(path)
    start = time.monotonic()
    try:
        source = read_source(path)
    except SporkError as e:  # the report must not read it again (/dev/zero, /dev/urandom)
        linecache.cache[path] = (0, None, [], path)
        return LoadedFile(path, error=e)
    remember_source(path, source)
    run = run_child(_verifier_child, lambda policy: pickle.dumps(
        LoadRequest(path, source, start, printed, policy)), timeout_s, start, hidden)
    try:
        reply = read_reply(run.reply)
    except Exception as e:  # IR holding a value of a class only the child could import
        return LoadedFile(path, (), InternalError(
            f"the procs of {path} cannot be read back from the loading process: "
            f"{type(e).__name__}: {e}", SrcLoc(path, 0, 0)), run.output)
    total_s = time.monotonic() - start
    if reply is not None and reply.stage is Stage.done:
        timings = {"total_s": total_s, "startup_s": reply.startup_s, "run_s": reply.run_s}
        error = reply.failure.error() if reply.failure else None
        return LoadedFile(path, reply.procs, error, run.output, timings,
                          sync_calls=reply.sync_calls if error is None else ())
    error = no_reply_error(path, reply, run.returncode, run.timed_out, timeout_s,
                            run.crash_loc, run.output)
    return LoadedFile(path, (), error, run.output, {"total_s": total_s})
