"""Rebuild one proc of an upstream test file and run upstream's own sync_check on it (issue 8).

Run by benchmarks/upstream_conformance.py with *upstream's* Python, for a test where
spork-verify refutes a proc that upstream's static compile accepts: does upstream's own
concrete checker, at the counterexample's sizes, report a hazard too?
`UPSTREAM_PY upstream_recheck.py TEST_FILE MKPROC KWARGS_JSON SIZES_JSON`, with
CAMSPORK_JIT_DIR set; KWARGS_JSON maps each keyword to its source text, evaluated in the test
module's namespace. Prints one JSON line: {"upstream": "raises" (a hazard: CamsporkError)|"cannot check" (another
error: a limitation of upstream's checker)|"passes"|"not rebuilt", "message": ...}.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path


def main() -> int:
    test, mkproc = Path(sys.argv[1]).resolve(), sys.argv[2]
    kwargs_text, sizes = json.loads(sys.argv[3]), json.loads(sys.argv[4])
    sys.dont_write_bytecode = True
    sys.path.insert(0, str(test.parent))
    try:
        module = importlib.import_module(test.stem)
        scope = vars(module)
        kwargs = {k: eval(text, scope) for k, text in kwargs_text.items()}  # noqa: S307
        built = scope[mkproc](**kwargs)
    except Exception as e:  # the proc cannot be rebuilt outside its test
        print(json.dumps({"upstream": "not rebuilt", "message": f"{type(e).__name__}: {e}"}))
        return 0
    for p in built if isinstance(built, (list, tuple)) else [built]:
        try:
            p.sync_check(**sizes)
        except Exception as e:  # a finding (CamsporkError) or a limitation of upstream's
            first = (str(e).strip().splitlines() or [""])[0]
            first = re.sub(r"^\S+\.py:\d+:\d+:(\(\w+\))*:?\s*", "", first)  # no paths
            found = type(e).__name__ == "CamsporkError"
            print(json.dumps({"upstream": "raises" if found else "cannot check",
                              "message": f"{type(e).__name__}: {first[:160]}"}))
            return 0
    print(json.dumps({"upstream": "passes", "message": ""}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
