"""Upstream's own sync_check on a sporkbench file's procs at given sizes (issue 18): the
evidence behind the verdict column of benchmarks/results/sporkbench_files.txt.

Run with *upstream's* Python (an Exo-GPU that builds the file: akeley98/camspork_jit for
sporkbench main, akeley98/dev26 for ping_pong), CAMSPORK_JIT_DIR set and the working folder
where upstream's checker is built (its JIT keeps its build log there):

    UPSTREAM_PY benchmarks/sporkbench_upstream_check.py FILE SIZES_JSON [PROC_SUBSTRING]

FILE runs as `python FILE` would (from a copy: it writes a .json beside it), except that its
own `sync_check` calls are recorded, not run; then every proc it built (whose name contains
PROC_SUBSTRING) is checked by upstream's `sync_check` at SIZES_JSON (a JSON object, e.g. the
counterexample sizes spork-verify reports), and compiled by upstream's own compiler
(`ext_compile_procs_to_strings`, whose lowering runs static rules sync_check does not, e.g. the
second sync-tl of a Fence). One JSON line per proc: {"proc", "sizes", "upstream": "passes" |
"raises" | "cannot check", "message", "cpu_s", "compile": "compiles" | its error}.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import time


def main() -> int:
    path, sizes = os.path.abspath(sys.argv[1]), json.loads(sys.argv[2])
    want = sys.argv[3] if len(sys.argv) > 3 else ""
    from exo.API import Procedure, ext_compile_procs_to_strings

    real, built = Procedure.sync_check, {}

    def record(self, **kwargs):  # the file's own calls: the proc is what we want
        built.setdefault(self.name(), self)

    Procedure.sync_check = record
    sys.path.insert(0, os.path.dirname(path))  # the working folder stays: upstream's build
    sys.argv = [path]
    runpy.run_path(path, run_name="__main__")
    for name, proc in sorted(built.items()):
        if want not in name:
            continue
        t0 = time.process_time()
        try:
            real(proc, **sizes)
            verdict, message = "passes", ""
        except Exception as e:  # noqa: BLE001  upstream's checker: a hazard, or a limitation
            hazard = "HAZARD" in str(e) or type(e).__name__ == "CamsporkError"
            verdict, message = ("raises" if hazard else "cannot check"), \
                f"{type(e).__name__}: {' / '.join(str(e).split(chr(10))[:3])}"[:300]
        cpu = round(time.process_time() - t0, 2)
        try:
            ext_compile_procs_to_strings([proc], name)
            compiled = "compiles"
        except Exception as e:  # noqa: BLE001  upstream's compiler refuses the proc
            compiled = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
        print(json.dumps({"proc": name, "sizes": sizes, "upstream": verdict,
                          "message": message, "cpu_s": cpu, "compile": compiled}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
