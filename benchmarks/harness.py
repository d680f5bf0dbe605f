"""What the benchmark scripts share: the machine's load (the machine is shared and noisy, so
every table says how busy it was) and one measurement run in a fresh interpreter, whose last
stdout line is JSON. Scripts run as `python3 benchmarks/NAME.py` import it as `harness`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

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
