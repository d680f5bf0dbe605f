"""The CLI's dealings with the outside world: destinations checked before any proof, a report
written as each file finishes and left valid on failure or Ctrl-C, and Ctrl-C that stops a z3
check in progress (specs/cli.md, CLI-2..CLI-4). Decides no verdict.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import sys
import tempfile
import threading
import types
from pathlib import Path
from typing import Callable, Iterator, NoReturn

from verifier.results import ProcResult
from verifier.user_files import UnreadableFile, printable_text, read_user_file


class UsageError(Exception):
    """A bad option value or destination: exit 2 with this message, before any proof."""


def say(message: str) -> None:
    """A line on stderr; the file names in it are the user's, so control characters are shown
    escaped, never obeyed by the terminal (CLI-5)."""
    print(printable_text(message), file=sys.stderr)


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_output_file(name: str, inputs: list[str]) -> None:
    """`--output FILE` must name a file we can create or replace, and none of the inputs
    (CLI-2): replacing the kernel file by its own report would destroy it."""
    path = Path(name)
    for given in inputs:
        with contextlib.suppress(OSError):
            if path.exists() and path.samefile(given):
                raise UsageError(f"--output {name}: is the input {given}; the report would "
                                 "replace it. Name another file")
    if path.is_dir():
        raise UsageError(f"--output {name}: is a directory; name a file, e.g. {name}/report")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"--output {name}: the folder {folder} does not exist; create it first")
    if path.exists() and not os.access(path, os.W_OK) or not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"--output {name}: not writable (permission denied); choose another "
                         "path")


def check_emit_dir(name: str, option: str = "--emit-cuda", what: str = ".cu") -> None:
    """`--emit-cuda DIR` (or `--smt2 DIR`) must be a folder, or creatable as one (CLI-2)."""
    path = Path(name)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{option} {name}: exists and is not a folder; name a folder for "
                         f"the {what} files")
    base = _nearest_existing(path)
    if not base.is_dir():
        raise UsageError(f"{option} {name}: {base} is not a folder")
    if not os.access(base, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {name}: {base} is not writable (permission denied)")


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


class QueryWriter:
    """`--smt2 DIR`: every obligation's query as `DIR/PROC/ID.smt2` (CLI-10), the id with
    every character outside `[A-Za-z0-9._-]` as `_`; a proc name met twice in one run gets
    `DIR/PROC.2/`, so nothing is overwritten. Each file is `;;` comment lines (proc, obligation,
    rule, status, query hash), then the query text exactly as its hash was taken."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)
        self.taken: set[str] = set()
        self.write_error = False  # a file could not be written (a full disk): said, exit 2

    def write(self, result: ProcResult) -> int:
        """Write the result's queries; on an OSError say so on stderr once and go on: the
        verdicts do not depend on the files (CLI-10)."""
        try:
            return self._write(result)
        except OSError as e:
            if not self.write_error:
                say(f"spork-verify: error: --smt2 {self.folder}: cannot write the queries of "
                    f"{result.proc}: {e.strerror}; the report is complete, the folder is not")
            self.write_error = True
            return 0

    def _write(self, result: ProcResult) -> int:
        name, k = result.proc, 1
        while name in self.taken:
            k += 1
            name = f"{result.proc}.{k}"
        self.taken.add(name)
        folder = self.folder / _UNSAFE.sub("_", name)
        written = 0
        releases = tuple(o for x in result.releases for o in x.obligations)  # CG-R1
        for ob in result.obligations + releases:
            if not ob.query:
                continue
            folder.mkdir(parents=True, exist_ok=True)
            stem = _UNSAFE.sub("_", ob.id)
            head = [f";; spork-verify {json.dumps(result.file)}: proc {result.proc}",
                    f";; obligation {ob.id} ({ob.rule}, {ob.kind}): {ob.description}",
                    f";; status {ob.status.value}; query hash {ob.query_hash} (of the text below)"]
            (folder / f"{stem}.smt2").write_bytes(("\n".join(head) + "\n" + ob.query)
                                                  .encode("utf-8"))
            written += 1
        return written


MAX_OPTION_FILE = 16 << 20  # a file an option names is read at most this far (/dev/zero)


def read_file_bytes(option: str, name: str) -> bytes:
    """The bytes of a file named by an option (e.g. `--check-cert`), or a UsageError; a FIFO,
    device or socket is refused by its kind, never opened to block (CLI-2)."""
    try:
        data = read_user_file(name, MAX_OPTION_FILE)
    except UnreadableFile as e:
        raise UsageError(f"{option} {name}: {e}") from None
    if len(data) > MAX_OPTION_FILE:
        raise UsageError(f"{option} {name}: larger than {MAX_OPTION_FILE >> 20} MiB; not a "
                         "file this option reads")
    return data


Render = Callable[[list[ProcResult]], str]


class ReportSink:
    """Where the report goes. Text is written file by file as each finishes; a structured
    format (JSON, SARIF, JUnit) is one document, written whole by `finish` — also after a
    failure or Ctrl-C, with what finished. `--output FILE` is replaced atomically."""

    def __init__(self, render: Render, streaming: bool, output: str | None,
                 before_write: Callable[[], None] = lambda: None) -> None:
        self.render = render
        self.streaming = streaming
        self.output = output
        self.before_write = before_write
        self.results: list[ProcResult] = []
        self.streamed: list[str] = []
        self.write_error: str | None = None

    def add_file(self, results: list[ProcResult]) -> None:
        self.results.extend(results)
        if self.streaming and results:
            text = self.render(results)
            self.streamed.append(text)
            if self.output is None:
                self._to_stdout(text)
            else:
                self._to_output("".join(self.streamed))

    def finish(self) -> None:
        if not self.streaming:
            text = self.render(self.results)
            if self.output is None:
                self._to_stdout(text)
            else:
                self._to_output(text)

    def _to_stdout(self, text: str) -> None:
        self.before_write()
        with contextlib.suppress(BrokenPipeError):  # `| head`: the reader has enough
            sys.stdout.write(text)
            sys.stdout.flush()

    def _to_output(self, text: str) -> None:
        """Write the whole report so far to a temporary file beside FILE, then rename: FILE
        always holds a complete report. On failure (disk full) say so and print it instead."""
        assert self.output is not None
        target = Path(self.output)
        try:
            if target.exists() and not target.is_file():  # /dev/null, /dev/full, a pipe
                with target.open("w", encoding="utf-8") as f:
                    f.write(text)
                return
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as f:
                    f.write(text)
                os.replace(tmp, target)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        except OSError as e:
            if self.write_error is None:
                self.write_error = f"--output {self.output}: cannot write the report: " \
                                   f"{e.strerror}; it follows on stdout instead"
                self.before_write()
                say(f"spork-verify: error: {self.write_error}")
            self.output = None
            self.streamed = []
            self._to_stdout(text)


_STOP = threading.Event()  # Ctrl-C was pressed: stop at the next safe point
_RAISED = threading.Event()  # the KeyboardInterrupt was raised: the report is being written
_REPEAT_S = 0.05  # how often the watchdog re-interrupts checks that start after Ctrl-C


def stop_if_interrupted() -> None:
    """A safe point: raise KeyboardInterrupt once Ctrl-C was pressed. Called between
    obligations, procs and files, so a result built from cancelled checks is never kept."""
    if _STOP.is_set():
        _RAISED.set()
        raise KeyboardInterrupt


def interrupt_requested() -> bool:
    return _STOP.is_set()


def _unsafe_to_raise(frame: types.FrameType | None) -> bool:
    """In a finalizer Python would print the KeyboardInterrupt and drop it; in a z3 object's
    `__init__` it would leave a half-built object whose finalizer fails noisily."""
    while frame is not None:
        code = frame.f_code
        if code.co_name == "__del__" or code.co_name == "__init__" and \
                f"{os.sep}z3{os.sep}" in code.co_filename:
            return True
        frame = frame.f_back
    return False


def _on_sigint(signum: int, frame: types.FrameType | None) -> None:
    """Raise KeyboardInterrupt once; where that is unsafe, wait for the watchdog's next
    SIGINT (every 50 ms) or the next safe point."""
    _STOP.set()
    if _RAISED.is_set() or _unsafe_to_raise(frame):
        return
    _RAISED.set()
    raise KeyboardInterrupt


@contextlib.contextmanager
def interruptible_solvers(interrupt: Callable[[], None]) -> Iterator[None]:
    """While active, SIGINT sets the stop flag, raises KeyboardInterrupt, and a watchdog thread
    calls `interrupt()` (again every 50 ms, for checks that start later), so a z3 check in
    progress returns at once (CLI-4). z3's own Ctrl-C handler must be off
    (`stop_checks_on_interrupt`): it swallows the signal and ends the check as `unknown`."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield  # tests calling main() from a thread, or SIGINT ignored: nothing to watch
        return
    _STOP.clear()
    _RAISED.clear()
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    signal.signal(signal.SIGINT, _on_sigint)
    finished = threading.Event()

    def watch() -> None:
        with contextlib.suppress(OSError):
            while data := reader.recv(64):
                if signal.SIGINT in data:
                    _STOP.set()
                    while not finished.is_set():
                        with contextlib.suppress(Exception):  # the watchdog must not die
                            interrupt()
                            if not _RAISED.is_set():  # the handler declined: ask again
                                os.kill(os.getpid(), signal.SIGINT)
                        finished.wait(_REPEAT_S)
                    return

    watcher = threading.Thread(target=watch, name="spork-verify-sigint", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        finished.set()
        signal.set_wakeup_fd(previous)
        if signal.getsignal(signal.SIGINT) is _on_sigint:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        writer.close()
        with contextlib.suppress(OSError):
            reader.shutdown(socket.SHUT_RDWR)
        reader.close()


def ignore_further_interrupts() -> None:
    """Once stopping, a second Ctrl-C must not cut the report being written."""
    with contextlib.suppress(ValueError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def exit_after_interrupt() -> NoReturn:
    """End with status 130 once a Ctrl-C was handled (CLI-4). CPython marks a KeyboardInterrupt
    raised inside code compiled from a string (the methods `dataclasses` builds while modules
    import) as unhandled even after it was caught, and would then end the process by SIGINT
    instead of with 130; so the exit functions run here and the process leaves by os._exit."""
    import atexit

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(130)
