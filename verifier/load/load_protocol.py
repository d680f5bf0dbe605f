"""What the loading child and the verifier exchange (specs/loading.md, "Isolated loading").

The request (file path and text) goes to the child's stdin; the reply comes back through a
file of its own, never through the child's stdout, which belongs to the user's code. A reply is
one frame: magic, length, SHA-256, pickle. The child rewrites the whole file for each frame, so
the last frame written wins and a partial or foreign write is detected, never unpickled.

Stdlib objects travel by name: a frozen object bound at module level in a `verifier.*` module
(an instr, a memory, a unit) is sent as a reference to that binding and resolved to the parent's
own object, so IR that holds stdlib values with callables (instr shapes) still travels.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib
import io
import os
import pickle
import pkgutil
import struct
import sys
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from typing import Any

from verifier.diagnostics import InternalError, RejectedInput, SporkError, SrcLoc, Unsupported
from verifier.lang.ir import ir
from verifier.lang.stdlib.memories import MemoryName
from verifier.load.sandbox import Policy
from verifier.load.sync_record import SyncCall

MAGIC = b"SPORKLD1"
_HEADER = struct.Struct(">8sQ32s")
_ERROR_KINDS: dict[str, type[SporkError]] = {
    "rejected": RejectedInput, "unsupported": Unsupported, "internal": InternalError}


@dataclass(frozen=True)
class PrintedProc:
    """A proc as upstream Exo-GPU printed it after its own rewrites (SCHED-3): parsed by our
    front end in the loading child, never run as the user's file."""

    name: str
    text: str
    file: str  # the name its locations carry: `FILE@exo-gpu/NAME.py`
    root: bool  # one of the file's procs (else only a callee of one, CALL-1)


@dataclass(frozen=True)
class LoadRequest:
    path: str
    source: str
    started_at: float  # time.monotonic() in the parent when the child was spawned
    printed: tuple[PrintedProc, ...] = ()  # parse these texts instead of running the file
    policy: Policy | None = None  # confine the file's process to it (SEC-2); None: no Landlock


@dataclass(frozen=True)
class LoadFailure:
    """A SporkError as plain data (exceptions lose their fields when pickled)."""

    kind: str  # a key of _ERROR_KINDS
    message: str
    loc: SrcLoc
    rule: str
    code: str
    variable: str | None
    proc: str | None

    @staticmethod
    def of(e: SporkError) -> "LoadFailure":
        kind = "rejected" if isinstance(e, RejectedInput) else \
            "unsupported" if isinstance(e, Unsupported) else "internal"
        return LoadFailure(kind, e.message, e.loc, e.rule, e.code, e.variable, e.proc)

    def error(self) -> SporkError:
        e = _ERROR_KINDS[self.kind](self.message, self.loc, self.rule, self.code, self.variable)
        e.proc = self.proc
        return e


class Stage(Enum):
    started = "started"  # the child is ready and runs the user's file now
    exiting = "exiting"  # the user's file called os._exit
    done = "done"


@dataclass(frozen=True)
class LoadReply:
    stage: Stage
    procs: tuple[ir.Proc, ...] = ()
    failure: LoadFailure | None = None
    exit_code: int | None = None  # for Stage.exiting
    exit_loc: SrcLoc | None = None
    startup_s: float = 0.0  # spawn until the user's file starts (interpreter + our imports)
    run_s: float = 0.0  # running the user's file
    sync_calls: tuple[SyncCall, ...] = ()  # the file's own sync_check calls (SYNC-1)


def _immutable(value: object) -> bool:
    params = getattr(type(value), "__dataclass_params__", None)
    return params is not None and params.frozen


def _stdlib_bindings() -> dict[int, tuple[str, str]]:
    """id(object) -> (module, name) for the stdlib values sent by name: frozen dataclasses
    only, so the parent's object is exactly the child's (a mutable one travels by value)."""
    out: dict[int, tuple[str, str]] = {}
    modules = sorted((name for name in sys.modules if name.startswith("verifier.")),
                     key=lambda name: (name != "verifier.lang", name))
    for mod_name in modules:
        module = sys.modules[mod_name]
        for attr, value in list(vars(module).items()):
            kind = type(value)
            if kind.__module__.startswith("verifier.lang") and kind.__module__ != ir.__name__ \
                    and _immutable(value) and id(value) not in out:
                out[id(value)] = (mod_name, attr)
    return out


class _ReplyPickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.bindings = _stdlib_bindings()

    def persistent_id(self, obj: Any) -> tuple[str, str] | None:
        return self.bindings.get(id(obj))


@functools.cache
def _data_classes() -> dict[tuple[str, str], type]:
    """(module, name) -> class for every class a reply may name: the IR's and the stdlib's
    dataclasses and enums (with `ProcName` and `MemoryName`, names that are also callable as
    upstream's `p.name()` / `mem.name()`), `SrcLoc`, the reply records (an in-file
    `sync_check` call and the report's finding it may carry among them) and `Fraction`.
    Nothing else: no function, no module, no builtin, so decoding a reply calls no code but
    these classes' own constructors and `__setstate__` (SEC-1)."""
    import verifier.lang.stdlib as stdlib

    modules = [ir, *(importlib.import_module(f"{stdlib.__name__}.{m.name}")
                     for m in pkgutil.iter_modules(stdlib.__path__))]
    out: dict[tuple[str, str], type] = {}
    for module in modules:
        for name, value in vars(module).items():
            if isinstance(value, type) and value.__module__ == module.__name__ and (
                    dataclasses.is_dataclass(value) or issubclass(value, Enum)):
                out[(module.__name__, name)] = value
    for cls in (ir.ProcName, MemoryName, SrcLoc, LoadReply, LoadFailure, Stage, Fraction,
                SyncCall):  # SYNC-1
        out[(cls.__module__, cls.__qualname__)] = cls
    return out


def _stdlib_value(module: str, attr: str) -> Any:
    """A stdlib object a reply names by its binding (LOAD-9): only a frozen dataclass
    instance bound at module level in `verifier.lang.*`, as `_stdlib_bindings` sends."""
    if not (module == "verifier.lang" or module.startswith("verifier.lang.")) or \
            not attr.isidentifier():
        raise pickle.UnpicklingError(f"the reply names {module}.{attr}, which is not a "
                                     "stdlib object of spork-verify")
    try:
        value = vars(importlib.import_module(module))[attr]
    except (ImportError, KeyError) as e:
        raise pickle.UnpicklingError(f"the reply names {module}.{attr}, which does not "
                                     "exist") from e
    kind = type(value)
    if not (kind.__module__.startswith("verifier.lang") and _immutable(value)):
        raise pickle.UnpicklingError(f"the reply names {module}.{attr}, which is not a "
                                     "stdlib object of spork-verify")
    return value


class _ReplyUnpickler(pickle.Unpickler):
    """Decodes data only: every class it may name is in `_data_classes` (SEC-1, LOAD-9)."""

    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file)
        self.allowed = _data_classes()

    def find_class(self, module: str, name: str) -> Any:
        cls = self.allowed.get((module, name))
        if cls is None:
            raise pickle.UnpicklingError(f"the reply names {module}.{name}, which is not part "
                                         "of spork-verify's IR or stdlib")
        return cls

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) == 2 and all(isinstance(p, str)
                                                                 for p in pid)):
            raise pickle.UnpicklingError(f"the reply holds a malformed reference {pid!r}")
        return _stdlib_value(*pid)


def encode_frame(magic: bytes, payload: bytes) -> bytes:
    return _HEADER.pack(magic, len(payload), hashlib.sha256(payload).digest()) + payload


def encode_reply(reply: LoadReply) -> bytes:
    buf = io.BytesIO()
    _ReplyPickler(buf).dump(reply)
    return encode_frame(MAGIC, buf.getvalue())


def write_reply(fd: int, reply: LoadReply) -> None:
    data = encode_reply(reply)
    os.ftruncate(fd, 0)
    written = 0
    while written < len(data):
        written += os.pwrite(fd, data[written:], written)


def read_frame(data: bytes, magic: bytes) -> bytes | None:
    """The payload of the frame `data` holds, or None when it is not a whole frame of `magic`
    (LOAD-9: a partial or foreign write is detected, never decoded)."""
    if len(data) < _HEADER.size:
        return None
    found, length, digest = _HEADER.unpack_from(data)
    payload = data[_HEADER.size:_HEADER.size + length]
    if found != magic or len(payload) != length or hashlib.sha256(payload).digest() != digest:
        return None
    return payload


def read_reply(source: int | bytes) -> LoadReply | None:
    """The child's last reply (from its reply file's descriptor or contents), or None when it
    wrote none (or not a whole one)."""
    if isinstance(source, int):
        size = os.fstat(source).st_size
        source = os.pread(source, size, 0) if size else b""
    payload = read_frame(source, MAGIC)
    if payload is None:
        return None
    reply = _ReplyUnpickler(io.BytesIO(payload)).load()
    if not _well_formed(reply):
        raise pickle.UnpicklingError("the reply is not a LoadReply of procs")
    return reply


def _well_formed(reply: object) -> bool:
    """The reply's own fields have the types the parent reads (the IR inside is data the
    parent's passes check as they would the parser's)."""
    return isinstance(reply, LoadReply) and isinstance(reply.stage, Stage) and \
        isinstance(reply.procs, tuple) and all(isinstance(p, ir.Proc) for p in reply.procs) \
        and isinstance(reply.failure, (LoadFailure, type(None))) and \
        isinstance(reply.exit_code, (int, type(None))) and \
        isinstance(reply.exit_loc, (SrcLoc, type(None))) and \
        all(type(t) is float for t in (reply.startup_s, reply.run_s))
