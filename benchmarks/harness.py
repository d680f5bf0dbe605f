"""What the benchmark scripts share: the machine's load (the machine is shared and noisy, so
every table says how busy it was) and one measurement run in a fresh interpreter, whose last
stdout line is JSON. Scripts run as `python3 benchmarks/NAME.py` import it as `harness`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent


def load_average() -> str:
    """The 1, 5 and 15 minute load averages (os.getloadavg())."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def child_json(argv: list[str], env: dict[str, str] | None = None, cwd: Path = ROOT) -> Any:
    """The JSON of the last stdout line of `argv`, run to the end; RuntimeError with its last
    stderr line when it fails."""
    out = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1:] or ["failed"])
    return json.loads(out.stdout.strip().splitlines()[-1])


def loaded_sm90a_gemms(checkout: Path, tmp: Path) -> Iterator[tuple[Path, list[Any]]]:
    """For each of sporkbench's examples/Sm90a_gemm/exocc_*.py: a file holding the procs it
    builds (loaded once, in a copy under `tmp`, since the files write a .json beside them), for
    fresh interpreters to read back with `read_reply`, and those procs."""
    from verifier.load.load_isolated import load_isolated
    from verifier.load.load_protocol import LoadReply, Stage, write_reply

    for path in sorted((checkout / "examples" / "Sm90a_gemm").glob("exocc_*.py")):
        copy = tmp / path.stem / path.parent.name
        shutil.copytree(path.parent, copy)
        loaded = load_isolated(copy / path.name)
        procs_file = tmp / path.stem / "procs.bin"
        fd = os.open(procs_file, os.O_RDWR | os.O_CREAT, 0o600)
        write_reply(fd, LoadReply(Stage.done, loaded.procs))
        os.close(fd)
        yield procs_file, list(loaded.procs)
