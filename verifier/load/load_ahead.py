"""Load the first file in a thread while the command line imports the prover (specs/loading.md,
Cost): the loading child, an interpreter of its own, and those imports overlap on two cores.
`cancel` (Ctrl-C, or the imports failing) ends the child (LOAD-6)."""

from __future__ import annotations

import threading
import time

from verifier.load.load_isolated import LoadedFile, kill_loading_children
from verifier.load.load_scheduled import load_file


class LoadAhead(threading.Thread):
    """`load_file(path, timeout_s, exo_gpu_python)` in a thread; `result()` waits for it."""

    def __init__(self, path: str, timeout_s: float, exo_gpu_python: str | None) -> None:
        super().__init__(name="spork-verify-load", daemon=True)
        self.path, self.timeout_s, self.exo_gpu_python = path, timeout_s, exo_gpu_python
        self.loaded: LoadedFile | None = None
        self.error: BaseException | None = None
        # not join()/is_alive(): Python 3.11 marks a thread stopped when Ctrl-C interrupts a
        # join with a timeout while the thread still runs (bpo-45274's fix)
        self.done = threading.Event()
        self.start()

    def run(self) -> None:
        try:
            self.loaded = load_file(self.path, self.timeout_s, self.exo_gpu_python)
        except BaseException as e:  # ExoGpuUnavailable and the like: raised in the main thread
            self.error = e
        finally:
            self.done.set()

    def result(self) -> LoadedFile:
        while not self.done.wait(timeout=0.05):  # in slices: Ctrl-C is handled in between
            pass
        if self.error is not None:
            raise self.error
        assert self.loaded is not None
        return self.loaded

    def cancel(self) -> None:
        """End the child, also one spawned just now: SIGTERM to its supervisor (SEC-4), then
        after a second SIGKILL to its process group."""
        start = time.monotonic()
        while not self.done.is_set() and time.monotonic() < start + 2.0:
            kill_loading_children(force=time.monotonic() > start + 1.0)
            self.done.wait(timeout=0.05)
