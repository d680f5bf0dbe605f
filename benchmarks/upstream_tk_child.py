"""Run one spork-verify kernel file under upstream Exo-GPU and its own sync_check (issue 18).

`UPSTREAM_PY upstream_tk_child.py FILE PROC SIZES_JSON`, with CAMSPORK_JIT_DIR set: the file's
`from verifier.lang import *` becomes upstream's imports (exo, exo.platforms.cuda, .Sm90,
.cuda_tk), the proc is built by upstream and `proc.sync_check(**sizes)` run. Prints one JSON
line: {"upstream": "passes" | "hazard" (its machine's CamsporkError) | "rejects" (an error
while building or checking the proc), "message": first line}.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

IMPORTS = ("from __future__ import annotations\nfrom exo import *\n"
           "from exo.platforms.cuda import *\nfrom exo.platforms.Sm90 import *\n"
           "from exo.platforms.cuda_tk import *\n")


def main() -> int:
    path, name, sizes = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    source = Path(path).read_text().replace("from verifier.lang import *\n", IMPORTS)
    module = types.ModuleType("kernel")
    module.__file__ = path
    try:
        exec(compile(source, path, "exec"), module.__dict__)  # noqa: S102 - a test kernel
        module.__dict__[name].sync_check(**sizes)
    except Exception as e:  # a finding of its machine, or a static error of upstream's
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        first = first.replace(str(Path(path).parent) + "/", "")[:200]  # no machine paths
        kind = "hazard" if type(e).__name__ == "CamsporkError" else "rejects"
        print(json.dumps({"upstream": kind, "message": f"{type(e).__name__}: {first}"}))
        return 0
    print(json.dumps({"upstream": "passes", "message": ""}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
