"""Run a user file and collect its module-level procs, in source order (specs/loading.md).

This is the in-process loader: the file runs inside the calling interpreter. The CLI never
calls it directly; it runs it in a child process (`load_child`, `load_isolated`) so that the
user's code cannot touch the verifier's state, output or exit code. Tests that build IR from a
file call `load_procs` directly.

The file is compiled with postponed annotations, so proc signatures such as
`x: f32[n] @ CudaGmemLinear` never run as Python (upstream files that lack
`from __future__ import annotations` work unchanged).
"""

from __future__ import annotations

import __future__
import ast
import contextlib
import io
import linecache
import sys
import sysconfig
import tokenize
import types
from pathlib import Path
from typing import Iterator

from verifier.diagnostics import UNKNOWN_LOC, RejectedInput, SporkError, SrcLoc
from verifier.lang.ir import ir
from verifier.load.source import python_lines, read_source  # noqa: F401 - read here by callers
from verifier.load.upstream_modules import upstream_aliases

_LIBRARY_DIRS = tuple(sorted({str(Path(p).resolve()) for p in (
    Path(__file__).resolve().parent.parent,  # the verifier package itself
    *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")))}))


def is_user_file(filename: str) -> bool:
    """Whether a frame's file is the user's code (not the verifier, Python or site-packages)."""
    if filename.startswith("<"):
        return False
    try:
        resolved = str(Path(filename).resolve())
    except (OSError, RuntimeError):
        return True
    return not any(resolved == d or resolved.startswith(d + "/") for d in _LIBRARY_DIRS)


def user_location(tb: types.TracebackType | None, default: SrcLoc) -> SrcLoc:
    """The innermost traceback frame in the user's code: where the user's file went wrong,
    in a sibling module if that is where it happened (LOAD-3)."""
    found = default
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if is_user_file(filename):
            found = SrcLoc(filename, tb.tb_lineno, 1)
        tb = tb.tb_next
    return found


def _compile(path: str, source: str) -> types.CodeType:
    try:
        return compile(source, path, "exec",
                       flags=__future__.annotations.compiler_flag, dont_inherit=True)
    except SyntaxError as e:
        raise RejectedInput(f"Python syntax error: {e.msg}",
                            SrcLoc(e.filename or path, e.lineno or 0, e.offset or 0),
                            code="ERR-P00", rule="LOAD-1") from None
    except (RecursionError, MemoryError):  # `not not ... x`, `a + a + ...` thousands deep
        raise RejectedInput("Python's compiler cannot compile the file: an expression is "
                            "nested thousands of levels deep (RecursionError while compiling); "
                            "split it into local variables", _deepest(path, source),
                            code="ERR-P00", rule="LOAD-1") from None


def _deepest(path: str, source: str) -> SrcLoc:
    """The line with the most tokens (tokenized without recursion; the syntax tree of such a
    file may be too deep to build): where the over-deep expression is written."""
    counts: dict[int, int] = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            counts[token.start[0]] = counts.get(token.start[0], 0) + 1
    except (tokenize.TokenError, SyntaxError):
        pass
    return SrcLoc(path, max(counts, key=lambda line: counts[line], default=1), 1)


def exit_message(e: BaseException) -> str:
    """Why loading stopped, for an exception that escaped the user's file."""
    if isinstance(e, SystemExit):
        return f"the file called sys.exit({e.code!r}) while loading; a kernel file must not " \
               "end the process (move the call under `if __name__ == \"__main__\":`)"
    if not isinstance(e, Exception):
        return f"the file raised {type(e).__name__} while loading"
    return f"error while running the file: {type(e).__name__}: {e}"


@contextlib.contextmanager
def script_path(path: str) -> Iterator[None]:
    """The file's folder first on sys.path while it runs, as when Python runs a script, so
    sibling modules import (LOAD-6). Afterwards the folder leaves sys.path and the user's
    modules imported meanwhile leave sys.modules, so loading a second file never sees them."""
    folder = str(Path(path).resolve().parent)
    before = set(sys.modules)
    sys.path.insert(0, folder)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(folder)
        for name in set(sys.modules) - before:
            filename = getattr(sys.modules[name], "__file__", None)
            if isinstance(filename, str) and is_user_file(filename) and \
                    not name.startswith("spork_user_"):
                del sys.modules[name]


def run_file(path: str | Path, source: str) -> types.ModuleType:
    """Execute `source` as the module of the file `path`; every failure is a located
    `SporkError` (LOAD-1..LOAD-3). KeyboardInterrupt from the terminal propagates."""
    path = str(path)
    code = _compile(path, source)
    check_unique_proc_defs(path, source)
    module = types.ModuleType(f"spork_user_{abs(hash(str(Path(path).resolve())))}")
    module.__file__ = path
    sys.modules[module.__name__] = module  # inspect.getsource needs the module registered
    # inspect.getsource reads through linecache: give it the text that runs (also for pipes)
    linecache.cache[path] = (len(source), None, python_lines(source), path)
    entry = SrcLoc(path, 1, 1)
    try:
        with script_path(path), upstream_aliases():
            exec(code, module.__dict__)  # noqa: S102 - running the user's own kernel file
    except SporkError as e:
        if e.loc == UNKNOWN_LOC:
            e.loc = user_location(e.__traceback__, entry)
        raise e.with_traceback(None) from None
    except (Exception, SystemExit) as e:
        raise RejectedInput(exit_message(e), user_location(e.__traceback__, entry),
                            code="ERR-P00", rule="LOAD-2") from None
    return module


def _is_proc_decorator(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "proc" or \
        isinstance(node, ast.Attribute) and node.attr == "proc"


def check_unique_proc_defs(path: str, source: str) -> None:
    """Two top-level `@proc def k` in one file: the second silently replaces the first, which
    would never be verified, and their CUDA functions would collide (LOAD-4, ERR-P40)."""
    first: dict[str, int] = {}
    for node in ast.parse(source, path).body:
        if isinstance(node, ast.FunctionDef) and any(map(_is_proc_decorator,
                                                         node.decorator_list)):
            if node.name in first:
                raise RejectedInput(
                    f"a second @proc named {node.name} (the first is at line "
                    f"{first[node.name]}): it replaces the first, which would not be verified; "
                    "give each proc its own name", SrcLoc(path, node.lineno, 1),
                    code="ERR-P40", rule="LOAD-4", variable=node.name)
            first[node.name] = node.lineno


def module_procs(module: types.ModuleType) -> list[ir.Proc]:
    """The distinct procs bound at module level, in source order: a proc bound to two names
    is verified once (LOAD-5); different procs that share a name (a proc and a scheduled copy
    of it) are each verified."""
    distinct = {id(v): v for v in vars(module).values() if isinstance(v, ir.Proc)}
    entry = module.__file__
    return sorted(distinct.values(), key=lambda p: (p.loc.file != entry, p.loc.file, p.loc.line))


def load_procs(path: str | Path) -> list[ir.Proc]:
    """Run the file in this process and return its procs (tests; the CLI isolates it)."""
    return module_procs(run_file(path, read_source(path)))
