"""The loading child: `main([REPLY_FD, CRASH_FD])` in a fresh interpreter (specs/loading.md).

Reads a `LoadRequest` from stdin, runs the user's file with the in-process loader, and writes
a `LoadReply` to REPLY_FD. The user's code owns this process's stdout and stderr (the parent
captures them); it never sees the reply channel's contents. `os._exit` is wrapped so that the
parent learns where it was called; faulthandler writes a traceback to CRASH_FD on a fatal
signal or when the parent asks (SIGUSR1, on a timeout), so a crash or a hang is located too.

Imports only what loading needs (no solver, no encoder), to keep the start-up cost small.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import signal
import sys
import time
from typing import Callable, NoReturn

from verifier.diagnostics import InternalError, RejectedInput, SporkError, SrcLoc
from verifier.load import load, sandbox, sync_record
from verifier.load.load_protocol import LoadFailure, LoadReply, LoadRequest, Stage, write_reply
from verifier.load.printed import parse_printed


Exit = Callable[[int], NoReturn]


def _wrap_os_exit(reply_fd: int, real_exit: Exit) -> None:
    def _exit(code: int) -> NoReturn:
        frame = sys._getframe(1)
        loc = None
        while frame is not None:
            if load.is_user_file(frame.f_code.co_filename):
                loc = SrcLoc(frame.f_code.co_filename, frame.f_lineno, 1)
                break
            frame = frame.f_back  # type: ignore[assignment]
        try:
            write_reply(reply_fd, LoadReply(Stage.exiting, exit_code=code, exit_loc=loc))
        finally:
            real_exit(code)

    os._exit = _exit  # type: ignore[assignment]


def _load(request: LoadRequest, reply_fd: int, real_exit: Exit) -> LoadReply:
    startup_s = time.monotonic() - request.started_at
    write_reply(reply_fd, LoadReply(Stage.started, startup_s=startup_s))
    _wrap_os_exit(reply_fd, real_exit)
    begin = time.monotonic()
    calls: tuple[sync_record.SyncCall, ...] = ()
    try:
        if request.printed:  # texts Exo-GPU printed (SCHED-3): parsed, the file is not run
            procs = tuple(parse_printed(request.printed))
        else:
            procs = tuple(load.module_procs(load.run_file(request.path, request.source)))
            calls = sync_record.take()  # SYNC-1: settled by the verifier after the proofs
        failure = None
    except SporkError as e:
        procs, failure = (), LoadFailure.of(e)
    except BaseException as e:  # KeyboardInterrupt and the like, raised by the user's code
        procs, failure = (), LoadFailure.of(RejectedInput(
            load.exit_message(e), load.user_location(e.__traceback__, SrcLoc(request.path, 1, 1)),
            code="ERR-P00", rule="LOAD-2"))
    finally:
        os._exit = real_exit  # the reply is ours to write from here on
    return LoadReply(Stage.done, procs, failure, startup_s=startup_s,
                     run_s=time.monotonic() - begin, sync_calls=calls)


def main(argv: list[str]) -> None:
    """Read the request; run the file in a confined child of this process, which stays
    outside the confinement as the subreaper that ends every process the file left (SEC-2,
    SEC-4). Without a policy (not Linux) the file runs in this process."""
    reply_fd, crash_fd = int(argv[0]), int(argv[1])
    for fd in (reply_fd, crash_fd):
        os.set_inheritable(fd, False)  # not passed on to processes the user's file starts
    request = pickle.load(sys.stdin.buffer)
    policy = request.policy
    if policy is None or not sys.platform.startswith("linux"):
        _run(request, reply_fd, crash_fd)
    sandbox.supervise(lambda: _run(request, reply_fd, crash_fd, policy))


def _shadowed(path: str) -> None:
    """SEC-2: the file's write outside its private folder went to a private copy."""
    print(f"spork-verify: the file wrote {path}; the write went to a private copy, discarded "
          "after loading (SEC-2)", file=sys.stderr)


def _run(request: LoadRequest, reply_fd: int, crash_fd: int,
         policy: sandbox.Policy | None = None) -> NoReturn:
    sys.argv = [request.path]  # as `python FILE` would set it, not our descriptors
    sys.stdin.close()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # input() in the user's file sees end of file, never the terminal
    os.close(devnull)
    sys.stdin = open(0, closefd=False)
    crash = open(crash_fd, "w", closefd=False)
    faulthandler.enable(crash)
    faulthandler.register(signal.SIGUSR1, crash)
    real_exit = os._exit
    if policy is not None:
        sandbox.confine_or_exit(policy, "the loading process")
        sandbox.shadow_writes(policy, _shadowed)
    reply = _load(request, reply_fd, real_exit)
    try:
        write_reply(reply_fd, reply)
    except (pickle.PicklingError, TypeError, AttributeError) as e:
        names = ", ".join(p.name for p in reply.procs)
        write_reply(reply_fd, LoadReply(Stage.done, failure=LoadFailure.of(InternalError(
            f"the IR of {names} cannot be sent back from the loading process: "
            f"{type(e).__name__}: {e}", SrcLoc(request.path, 1, 1)))))
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:  # noqa: S110 - the user's file may have closed or replaced them
            pass
    real_exit(0)  # skip the user's atexit handlers and non-daemon threads


if __name__ == "__main__":
    main(sys.argv[1:])
