"""Time upstream Exo-GPU's own `sync_check` per proc of one example file (issue 8).

Run by benchmarks/sporkbench_sm80.py with *upstream's* Python (its `exo` and compiled checker),
never with spork-verify's: `UPSTREAM_PY upstream_sync_check_time.py FILE SIZES_JSON`, with
CAMSPORK_JIT_DIR pointing at a scratch folder and the example's folder as the working directory.
The example runs as a script (its own small `sync_check` calls warm the checker's JIT); then
every proc the file lists in its `cases` (sporkbench's manifest; without one, every
`exo.Procedure` it leaves at module level) is checked once more at the sizes given, for the size
arguments it has. Prints one JSON line {proc name: seconds or "error: ..."}.
"""

from __future__ import annotations

import json
import runpy
import sys
import time
from pathlib import Path


def main() -> int:
    path, sizes = Path(sys.argv[1]).resolve(), json.loads(sys.argv[2])
    sys.path.insert(0, str(path.parent))  # sibling modules import as when run as a script
    import exo

    scope = runpy.run_path(str(path), run_name="__main__")
    listed = {c["proc"] for c in scope.get("cases", ()) if isinstance(c, dict) and "proc" in c}
    out: dict[str, float | str] = {}
    for value in list(scope.values()):
        if not isinstance(value, exo.Procedure) or value.name() in out or \
                (listed and value.name() not in listed):
            continue
        names = {str(a.name()) for a in value.args()}
        given = {k: v for k, v in sizes.items() if k in names}
        start = time.perf_counter()
        try:
            value.sync_check(**given)
            out[value.name()] = time.perf_counter() - start
        except Exception as e:  # upstream's finding: reported, not timed
            out[value.name()] = f"error: {type(e).__name__}: {str(e).splitlines()[0][:80]}"
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
