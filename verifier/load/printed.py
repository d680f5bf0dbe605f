"""Procs as upstream Exo-GPU printed them, read by our front end (SCHED-3, specs/upstream_api.md).

A script whose rewrites spork-verify does not reproduce (API-2) can be run under the user's own
Exo-GPU (`exo_gpu_child`); each proc it builds comes back as the text upstream's printer writes.
That text is plain proc source: here each one is parsed exactly as a `@proc def` of a user file
would be, its free names read in spork-verify's stdlib (`verifier.lang`, LOAD-6: instrs,
memories, units by upstream's names) and the procs printed before it (its callees, CALL-1).
Runs in the loading child, like every evaluation of the user's text (LOAD-6).
"""

from __future__ import annotations

import __future__
import ast
import linecache
from collections import Counter
from typing import Any

import verifier.lang as stdlib
from verifier.diagnostics import RejectedInput, SporkError, SrcLoc, Unsupported, char_column
from verifier.lang.ir import ir
from verifier.load.load_protocol import PrintedProc
from verifier.lang.parse.procs import parse_function
from verifier.load.source import python_lines

NOTE = "in the proc as upstream Exo-GPU printed it after its own rewrites (SCHED-3)"


def _names() -> dict[str, Any]:
    return {name: getattr(stdlib, name) for name in stdlib.__all__}


def _definition(printed: PrintedProc) -> ast.FunctionDef:
    """The text's one `def`, or an `unsupported` saying the printed text is outside what
    spork-verify reads (SCHED-4)."""
    try:
        tree = ast.parse(printed.text, printed.file)
    except SyntaxError as e:
        raise Unsupported(f"not supported by spork-verify: the text Exo-GPU printed for "
                          f"{printed.name} is not Python ({e.msg})",
                          SrcLoc(printed.file, e.lineno or 1, e.offset or 1), rule="SCHED-4",
                          code="ERR-V11") from None
    body = tree.body
    fdef = body[0] if len(body) == 1 else None
    if not isinstance(fdef, ast.FunctionDef) or fdef.decorator_list or fdef.args.defaults \
            or fdef.args.kw_defaults and any(fdef.args.kw_defaults) or fdef.name != printed.name:
        where = body[1] if len(body) > 1 else body[0] if body else None
        raise Unsupported(f"not supported by spork-verify: the text Exo-GPU printed for "
                          f"{printed.name} is not one plain `def {printed.name}(...)`",
                          SrcLoc(printed.file, getattr(where, "lineno", 1), char_column(
                              linecache.getline(printed.file, getattr(where, "lineno", 1)),
                              getattr(where, "col_offset", 0))),
                          rule="SCHED-4", code="ERR-V11")
    return fdef


def _called(fdef: ast.FunctionDef) -> set[str]:
    return {n.func.id for n in ast.walk(fdef)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def parse_printed(texts: tuple[PrintedProc, ...]) -> list[ir.Proc]:
    """The root procs of `texts` (callees first, as upstream orders them), each parsed by our
    front end; a failure is located in the printed text and says so (SCHED-3, SCHED-4)."""
    twice = {n for n, k in Counter(p.name for p in texts).items() if k > 1}
    known: dict[str, ir.Proc] = {}
    roots: list[ir.Proc] = []
    for printed in texts:
        linecache.cache[printed.file] = (len(printed.text), None,
                                         python_lines(printed.text), printed.file)
        try:
            fdef = _definition(printed)
            ambiguous = sorted(_called(fdef) & twice)
            if ambiguous:
                raise Unsupported(f"not supported by spork-verify: {printed.name} calls "
                                  f"{ambiguous[0]}, and Exo-GPU printed two different procs of "
                                  "that name; give them different names (rename)",
                                  SrcLoc(printed.file, fdef.lineno, 1), rule="SCHED-3",
                                  code="ERR-V11")
            scope = {**_names(), **known}
            code = compile(ast.Module([fdef], []), printed.file, "exec",
                           flags=__future__.annotations.compiler_flag, dont_inherit=True)
            exec(code, scope)  # noqa: S102 - defines the function; its body never runs
            parsed = parse_function(scope[printed.name])
        except SporkError as e:
            e.proc = printed.name
            if isinstance(e, RejectedInput | Unsupported) and NOTE not in e.message:
                e.message = f"{e.message} [{NOTE}: {printed.file}]"
            raise
        known[printed.name] = parsed
        if printed.root:
            roots.append(parsed)
    return roots
