"""Regenerate the recorded proof reports of the examples: `python proofs/regenerate.py
[--check] [examples/NAME.py ...]` (every example when none is named).

Each `proofs/<example>.json` is spork-verify's JSON report with timings removed and paths made
relative, so a re-run on another machine reproduces it byte for byte (same solver version);
`--check` exits 1 if any recorded report differs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def report(example: Path) -> str:
    out = subprocess.run([sys.executable, "-m", "verifier.cli", "--format", "json",
                          str(example.relative_to(ROOT))], cwd=ROOT, capture_output=True,
                         text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    doc = json.loads(out.stdout)
    for res in doc["results"]:
        res.pop("time_s", None)
        for ob in res["obligations"]:
            ob.pop("time_s", None)
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def main() -> int:
    check = "--check" in sys.argv
    named = [Path(a).resolve() for a in sys.argv[1:] if not a.startswith("--")]
    differs = []
    for example in named or sorted((ROOT / "examples").glob("*.py")):
        target = ROOT / "proofs" / f"{example.stem}.json"
        text = report(example)
        if check:
            if not target.exists() or target.read_text() != text:
                differs.append(target.name)
        else:
            target.write_text(text)
    for name in differs:
        print(f"differs: {name}")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
