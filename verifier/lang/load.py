"""Load a user file and collect its module-level procs, in source order.

The file is compiled with postponed annotations, so proc signatures such as
`x: f32[n] @ CudaGmemLinear` never run as Python (upstream files that lack
`from __future__ import annotations` work unchanged).
"""

from __future__ import annotations

import __future__
import sys
import types
from pathlib import Path

from verifier.diagnostics import RejectedInput, SrcLoc
from verifier.lang import ir
from verifier.lang.procs import ProcError


def load_procs(path: str | Path) -> list[ir.Proc | ProcError]:
    path = Path(path)
    try:
        source = path.read_text()
    except OSError as e:
        raise RejectedInput(f"cannot read {path}: {e.strerror}", SrcLoc(str(path), 0, 0),
                            code="ERR-P00") from None
    try:
        code = compile(source, str(path), "exec",
                       flags=__future__.annotations.compiler_flag, dont_inherit=True)
    except SyntaxError as e:
        raise RejectedInput(f"Python syntax error: {e.msg}",
                            SrcLoc(str(path), e.lineno or 0, e.offset or 0),
                            code="ERR-P00") from None
    module = types.ModuleType(f"spork_user_{abs(hash(str(path.resolve())))}")
    module.__file__ = str(path)
    sys.modules[module.__name__] = module  # inspect.getsource needs the module registered
    try:
        exec(code, module.__dict__)  # noqa: S102 - running the user's own kernel file
    except RejectedInput:
        raise
    except Exception as e:
        tb = e.__traceback__
        line = 0
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == str(path):
                line = tb.tb_lineno
            tb = tb.tb_next
        raise RejectedInput(f"error while running the file: {type(e).__name__}: {e}",
                            SrcLoc(str(path), line, 1), code="ERR-P00") from None
    found = [v for v in module.__dict__.values() if isinstance(v, (ir.Proc, ProcError))]
    found.sort(key=lambda p: p.loc.line)
    return found
