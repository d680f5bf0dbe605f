"""The Exo-GPU child: run a user file under upstream Exo-GPU and print its procs (SCHED-2).

Run as a script by the interpreter the user names with `--exo-gpu-python` (specs/upstream_api.md
SCHED-*): `PYTHON -P -u exo_gpu_child.py REPLY_FD CRASH_FD`. It imports nothing of spork-verify
(that interpreter need not have it, and spork-verify's `exo` names must not meet the real
ones): the standard library and upstream's `exo` only.

Reads a JSON request from stdin (`path`, `source`, and `call`: an expression evaluated in the
file's namespace after it ran, whose procs are wanted instead of the module-level ones), runs
the file with upstream's real `exo` package, and writes one JSON frame to REPLY_FD (the frame
of load_protocol: magic, length, SHA-256, payload) holding each wanted proc and every proc it
calls as upstream's own printer writes them (`str(proc)`). The texts are the whole output:
upstream's rewrites are not trusted, the printed program is what spork-verify verifies.
The same isolation as the loading child (LOAD-6..LOAD-9): the parent spawns it in its own
session, under the time limit, with its output captured; `os._exit` is wrapped so the parent
learns where it was called; faulthandler reports a crash or a hang.
"""

from __future__ import annotations

import __future__
import faulthandler
import hashlib
import io
import json
import linecache
import os
import re
import signal
import struct
import sys
import sysconfig
import time
import types
from typing import Any, NoReturn

MAGIC = b"SPORKEG1"
_HEADER = struct.Struct(">8sQ32s")  # as load_protocol's frames


def write_frame(fd: int, message: dict[str, Any]) -> None:
    payload = json.dumps(message).encode("utf-8")
    data = _HEADER.pack(MAGIC, len(payload), hashlib.sha256(payload).digest()) + payload
    os.ftruncate(fd, 0)
    written = 0
    while written < len(data):
        written += os.pwrite(fd, data[written:], written)


def _library_dirs() -> tuple[str, ...]:
    import exo

    dirs = {os.path.dirname(os.path.abspath(exo.__file__)), os.path.dirname(os.path.abspath(
        __file__))}
    dirs.update(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib",
                                                      "platlib"))
    return tuple(sorted(os.path.realpath(d) for d in dirs))


def _is_user_file(filename: str, library: tuple[str, ...]) -> bool:
    if filename.startswith("<"):
        return False
    resolved = os.path.realpath(filename)
    return not any(resolved == d or resolved.startswith(d + os.sep) for d in library)


def _where(tb_or_frame: Any, library: tuple[str, ...], default: Any) -> Any:
    """The innermost frame of the user's code (LOAD-3) as [file, line, col]."""
    found = default
    if isinstance(tb_or_frame, types.TracebackType):
        tb = tb_or_frame
        while tb is not None:
            if _is_user_file(tb.tb_frame.f_code.co_filename, library):
                found = [tb.tb_frame.f_code.co_filename, tb.tb_lineno, 1]
            tb = tb.tb_next
        return found
    frame = tb_or_frame
    while frame is not None:
        if _is_user_file(frame.f_code.co_filename, library):
            return [frame.f_code.co_filename, frame.f_lineno, 1]
        frame = frame.f_back
    return found


def _exo_version() -> str:
    try:
        from importlib import metadata

        return metadata.version("exo-lang")
    except Exception:  # noqa: BLE001 - an uninstalled checkout on sys.path has no metadata
        import exo

        return str(getattr(exo, "__version__", "unknown"))


def _file_procs(module: types.ModuleType, path: str) -> list[Any]:
    """The distinct non-instr procs bound at module level, as spork-verify's loader collects
    its own (LOAD-5), less upstream's library procs the file imported by name."""
    from exo.API import Procedure

    library = {id(v) for name, m in list(sys.modules.items())
               if name == "exo" or name.startswith("exo.")
               for v in list(vars(m).values()) if isinstance(v, Procedure)}
    distinct = {id(v): v for v in vars(module).values()
                if isinstance(v, Procedure) and not v.is_instr() and id(v) not in library}

    def order(p: Any) -> tuple[bool, str, int]:
        info = p._loopir_proc.srcinfo
        return (info.filename != path, str(info.filename), info.lineno)
    return sorted(distinct.values(), key=order)


def _printed(roots: list[Any]) -> list[dict[str, Any]]:
    """Each root proc and every non-instr proc it calls, callees first, as upstream prints
    them; upstream's own walk over the call graph (its C backend's declaration order)."""
    from exo.backend.LoopIR_compiler import find_all_subprocs

    wanted = [r._loopir_proc for r in roots]
    out, seen = [], []
    for root in wanted:  # in the file's order; each one's callees just before it
        for p in find_all_subprocs([root]):
            if p.instr is not None or any(p is q for q in seen):
                continue
            seen.append(p)
            out.append({"name": str(p.name), "text": str(p),
                        "root": any(p is w for w in wanted)})
    return out


def _prebuilt_checker() -> None:
    """Load upstream's checker library from the copy of the cache the parent made (SCHED-7)
    when it is newer than every checker source: upstream's JIT would run ninja on the copy,
    whose build log is not there (it records the cache's own paths), and so rebuild the whole
    library (about 40 s of CPU) in every child. A missing or older library is left to the JIT."""
    try:
        from exo.spork.camspork import jit
    except ImportError:
        return
    if not os.environ.get("CAMSPORK_JIT_DIR"):
        return
    lib = jit.get_libcamspork_path()
    try:
        built = os.stat(lib).st_mtime
        newest = max(os.stat(os.path.join(d, f)).st_mtime
                     for d, _, files in os.walk(jit.get_src_path()) for f in files)
    except (OSError, ValueError):
        return
    if newest < built:
        jit.compile_libcamspork = lambda: lib


def _run(request: dict[str, Any]) -> list[dict[str, Any]]:
    path, source = request["path"], request["source"]
    _prebuilt_checker()
    module = types.ModuleType("spork_user_exo_gpu")
    # the child runs in a build folder of its own (SCHED-7): `__file__` and the import path
    # name the file where it is, not relative to the caller's working folder
    module.__file__ = request.get("abspath", path)
    sys.modules[module.__name__] = module
    linecache.cache[path] = (len(source), None, io.StringIO(source, newline="\n").readlines(),
                             path)  # only "\n" ends a line, as for Python (LOAD-1)
    sys.path.insert(0, os.path.dirname(request.get("abspath", os.path.abspath(path))))
    code = compile(source, path, "exec", flags=__future__.annotations.compiler_flag,
                   dont_inherit=True)
    exec(code, module.__dict__)  # noqa: S102 - the user's own file, under their Exo-GPU
    if request.get("call"):
        value = eval(request["call"], module.__dict__)  # noqa: S307 - the harness's call
        roots = list(value) if isinstance(value, (list, tuple)) else [value]
        from exo.API import Procedure

        bad = [type(v).__name__ for v in roots if not isinstance(v, Procedure)]
        if bad:
            raise TypeError(f"{request['call']} returned {', '.join(bad)}, not procs")
    else:
        roots = _file_procs(module, path)
    return _printed(roots)


def _inside(filename: str, folder: str) -> bool:
    resolved = os.path.realpath(filename)
    return resolved == folder or resolved.startswith(folder + os.sep)


def _failure(e: BaseException, library: tuple[str, ...], path: str) -> dict[str, Any]:
    """`rejected` when the user's own code raised; `upstream` (SCHED-7) when the exception
    came out of upstream's package below the user's last frame (its JIT, its checker, a
    rewrite of its), with the innermost frame of upstream's that raised it."""
    if isinstance(e, SystemExit):
        message = f"the file called sys.exit({e.code!r}) while Exo-GPU ran it"
    else:
        message = re.sub(r"\x1b\[[0-9;]*m", "", f"{type(e).__name__}: {e}")  # no colours
    where = _where(e.__traceback__, library, [path, 1, 1])
    exo_dir = _exo_dir()
    upstream = None
    tb = e.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if _is_user_file(filename, library):
            upstream = None
        elif _inside(filename, exo_dir):
            upstream = [filename, tb.tb_lineno, 1]
        tb = tb.tb_next
    if upstream is not None and not isinstance(e, SystemExit):
        return {"kind": "upstream", "message": message, "where": where, "raised": upstream}
    return {"kind": "rejected", "message": message, "where": where}


def _exo_dir() -> str:
    import exo

    return os.path.realpath(os.path.dirname(os.path.abspath(exo.__file__)))


def _sandbox() -> types.ModuleType:
    """load/sandbox.py, loaded by path: this interpreter need not have spork-verify."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "spork_verify_sandbox", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                             "sandbox.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> None:
    """Read the request; run the file in a confined child of this process, which stays
    outside as the subreaper that ends every process the file left (SEC-2, SEC-4)."""
    reply_fd, crash_fd = int(argv[0]), int(argv[1])
    for fd in (reply_fd, crash_fd):
        os.set_inheritable(fd, False)
    request = json.loads(sys.stdin.buffer.read().decode("utf-8"))
    if request.get("policy") is None or not sys.platform.startswith("linux"):
        _serve(request, reply_fd, crash_fd, None)
    sandbox = _sandbox()
    policy = sandbox.Policy.from_json(request["policy"])
    sandbox.supervise(lambda: _serve(request, reply_fd, crash_fd, sandbox, policy))


def _serve(request: dict[str, Any], reply_fd: int, crash_fd: int, sandbox: Any,
           policy: Any = None) -> NoReturn:
    sys.argv = [request["path"]]
    sys.stdin.close()
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(0, closefd=False)
    crash = open(crash_fd, "w", closefd=False)
    faulthandler.enable(crash)
    faulthandler.register(signal.SIGUSR1, crash)
    if sandbox is not None:
        sandbox.confine_or_exit(policy, "the Exo-GPU process")
        sandbox.shadow_writes(policy, lambda path: print(
            f"spork-verify: the file wrote {path}; the write went to a private copy, "
            "discarded after loading (SEC-2)", file=sys.stderr))
    real_exit = os._exit
    begin = time.monotonic()
    write_frame(reply_fd, {"stage": "started"})
    try:  # Exo-GPU, not just exo-lang: its CUDA platform (SCHED-5)
        import exo.platforms.cuda  # noqa: F401 - its absence is the parent's usage error

        library = _library_dirs()
        write_frame(reply_fd, {"stage": "running", "library": list(library),
                               "exo_dir": _exo_dir()})
    except BaseException as e:  # noqa: BLE001 - no upstream Exo-GPU in this interpreter
        write_frame(reply_fd, {"stage": "done", "error": {
            "kind": "no-exo", "message": f"{type(e).__name__}: {e}"}})
        real_exit(0)
    reply: dict[str, Any] = {"stage": "done", "exo_version": _exo_version(),
             "python_version": sys.version.split()[0]}

    def _exit(code: int) -> NoReturn:
        write_frame(reply_fd, {"stage": "exiting", "exit_code": code,
                               "where": _where(sys._getframe(1), library, None)})
        real_exit(code)

    os._exit = _exit
    try:
        reply["procs"] = _run(request)
    except BaseException as e:  # noqa: BLE001 - everything the user's file raises is reported
        reply["error"] = _failure(e, library, request["path"])
    finally:
        os._exit = real_exit
    reply["run_s"] = time.monotonic() - begin
    write_frame(reply_fd, reply)
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:  # noqa: S110, BLE001 - the user's file may have closed them
            pass
    real_exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
