"""Running the CLI as a shell would, for the Ctrl-C tests: SIGINT at its default (a
pytest-xdist worker ignores SIGINT, and a child inherits that: it would never see Ctrl-C), and
waiting until the CLI runs its own code (before that, in the interpreter's start-up, Ctrl-C ends
it with -2, as it ends any program; on a loaded machine that takes longer than a fixed sleep)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def start_cli(args: list[str], **kwargs: object) -> subprocess.Popen:  # type: ignore[type-arg]
    """`python -m verifier.cli ARGS` from the repository, SIGINT at its default action."""
    return subprocess.Popen(  # type: ignore[call-overload]
        [sys.executable, "-m", "verifier.cli", *args], cwd=ROOT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **kwargs)


def descendants(root: int) -> set[int]:
    """Every process below `root`, read from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text()
                                               .rpartition(")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    out: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - out
        out |= frontier
    return out


def wait_until_loading(child: subprocess.Popen,  # type: ignore[type-arg]
                       timeout_s: float = 60.0) -> None:
    """Until the CLI has started a loading child (it then runs inside its own Ctrl-C handling,
    CLI-4) or has ended; without /proc, a second."""
    if not Path("/proc/self/stat").exists():
        time.sleep(1.0)
        return
    deadline = time.monotonic() + timeout_s
    while child.poll() is None and not descendants(child.pid) and time.monotonic() < deadline:
        time.sleep(0.01)


def stop_limit_s(quiet_s: float = 2.0) -> float:
    """How long a Ctrl-C may take to end a run: `quiet_s` on a quiet machine, stretched by the
    load per core (at a load of 20 on two cores a process gets a tenth of a core)."""
    return quiet_s * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


def interrupt(child: subprocess.Popen) -> tuple[int, str, str, float]:  # type: ignore[type-arg]
    """Send SIGINT; (exit status, stdout, stderr, seconds until it ended)."""
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    return child.returncode, out, err, time.monotonic() - sent


__all__ = ["ROOT", "descendants", "interrupt", "start_cli", "stop_limit_s", "wait_until_loading"]
