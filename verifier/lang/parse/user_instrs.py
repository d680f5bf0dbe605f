"""User-defined instructions with upstream's `@instr` class protocol (LANG-3.11).

An `@instr` class has a `behavior` (an Exo function: its parameters are the instr's, its body
says which it reads and writes) and an `instance(self, ...)` method that configures one
instantiation: `self.instr_tl`, `self.coll_unit`, `self.access_info[param]` (memory,
out-of-order flag, distributed units, owner-only access, atomicity), `self.barrier_mechanism`
and `self.barrier_coll_units`. Positional parameters of `instance` are control template
parameters (they name `size`/`index` parameters of `behavior`, which then stop being call
arguments), keyword-only ones are free-form extras, and every behaviour parameter of generic
type `R` takes a precision keyword.

`instr(cls)` returns an `InstrTemplate`; a call in a proc (`X(a[0:4], b[0:4], K=8)`) or in
Python (`X(K=8)`) runs `instance` in the loading process and turns the result into the same
`Instr` record the stdlib uses, so the instr's accesses and unit enter every analysis. What the
encoding cannot model is recorded in `Instr.unmodelled` and makes a call `unsupported` naming
the instr (never silently trusted). C code generation (`codegen`, `instr_format`) is ignored.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
from dataclasses import dataclass
from typing import Any

from verifier.diagnostics import RejectedInput, SporkError
from verifier.lang.ir import ir
from verifier.lang.stdlib.instrs import FixedShape, Instr, InstrParam, precision_name
from verifier.lang.stdlib.memories import DRAM, BarrierMechanism, Memory
from verifier.lang.parse.parse import ProcParser
from verifier.lang.stdlib.scalars import ScalarInfo
from verifier.lang.stdlib.timelines import InstrTL, QualTL
from verifier.lang.stdlib.units import CollUnit, standalone_thread


@dataclass
class AtomicityInfo:
    qual_tl_list: list[Any]


@dataclass
class AccessInfo:
    """What `instance` may say about one data parameter (upstream's fields)."""

    mem: Any = DRAM
    out_of_order: bool | None = None
    access_by_owner_only: bool | None = False
    const: bool = False  # not written by the behaviour (set automatically)
    write_only: bool = False  # not read by the behaviour (set automatically)
    scalar_info: Any = None
    allow_out_of_bounds: bool = False
    distributed_coll_units: Any = ()
    atomicity: AtomicityInfo | None = None


class InstrInfo:
    """Base of an `@instr` class; `instance` sets these attributes on an object of the class."""

    instr_tl: Any
    coll_unit: Any
    access_info: dict[str, AccessInfo]
    barrier_mechanism: Any
    barrier_coll_units: Any
    instr_format: Any
    c_utils: list[str]
    c_includes: list[str]
    cu_utils: list[str]
    cu_includes: list[str]


class InstrArgs:
    """Upstream's codegen argument bundle; only named in annotations of `codegen` here."""


_CONTROL_PARAM = {"size": "size", "index": "index", "bool": "index", "stride": "index"}


def instr(c_instr: Any, c_global: str = "") -> Any:
    """`@instr` on a class: a user-defined instruction template (LANG-3.11). The old form
    `@instr("C text")` on a function is refused (ERR-P05): it has no instr-tl or unit."""
    if inspect.isclass(c_instr):
        caller = sys._getframe(1)
        scope = dict(caller.f_locals) if caller.f_code.co_name != "<module>" else None
        return InstrTemplate(c_instr, scope)
    raise RejectedInput("@instr(\"C syntax\") on a function (the old instr form) is not "
                        "supported; write an @instr class with behavior() and instance()",
                        code="ERR-P05", rule="LANG-3.11")


class InstrTemplate:
    """One `@instr` class: its parsed behaviour and the template parameters of `instance`."""

    def __init__(self, cls: type, scope: dict[str, Any] | None,
                 bound: dict[str, Any] | None = None) -> None:
        name = cls.__name__
        self.cls, self.name, self.scope = cls, name, scope
        self.bound = dict(bound or {})
        if not callable(getattr(cls, "behavior", None)) or \
                not callable(getattr(cls, "instance", None)):
            raise RejectedInput(f"@instr class {name} needs behavior() and instance(self, ...)",
                                code="ERR-P05", rule="LANG-3.11")
        try:
            self.behavior = ProcParser(cls.behavior, scope).parse()
        except SporkError as e:
            e.proc = name
            raise
        self.controls, self.extras, self.defaults = _template_params(cls, self.behavior)
        self.precisions = tuple(a.name.name for a in self.behavior.args
                                if _base(a.typ) == "R")
        self.cache: dict[Any, Instr] = {}

    def __repr__(self) -> str:
        return f"<@instr {self.name}>"

    def partial(self, **kwargs: Any) -> "InstrTemplate":
        """This template with some keywords fixed (upstream's `partial`)."""
        out = object.__new__(InstrTemplate)
        out.__dict__.update(self.__dict__)
        out.bound = {**self.bound, **kwargs}
        out.cache = {}
        return out

    def __call__(self, **kwargs: Any) -> Instr:
        return self.instr_for_call(kwargs)

    def instr_for_call(self, kwargs: dict[str, Any]) -> Instr:
        """The concrete instr for these template keywords (runs `instance` once per value)."""
        given = {**self.defaults, **self.bound, **kwargs}
        known = self.controls + self.precisions + self.extras
        bad = [k for k in given if k not in known]
        missing = [k for k in self.controls + self.precisions if k not in given]
        if bad or missing:
            what = f"unknown keywords {bad}" if bad else f"missing keywords {missing}"
            raise self.error(given, f"{what}; expected {list(known)}")
        for k in self.controls:
            if not isinstance(given[k], int) or isinstance(given[k], bool):
                raise self.error(given, f"{k}={given[k]!r} is not an int")
        for k in self.precisions:
            given[k] = precision_name(given[k], f"{self.name}: {k}")
        key = tuple(sorted((k, repr(v)) for k, v in given.items()))
        if key not in self.cache:
            self.cache[key] = self.build(given)
        return self.cache[key]

    def error(self, given: dict[str, Any], detail: str) -> RejectedInput:
        text = ", ".join(f"{k}={v!r}" for k, v in given.items())
        return RejectedInput(f"Failed to instantiate {self.name}({text}): {detail}",
                             code="ERR-P07", rule="LANG-3.6")

    def build(self, given: dict[str, Any]) -> Instr:
        info = _new_info(self.cls)
        written, read = _effects(self.behavior.body)
        _prefill(info, self.behavior, written, read, given)
        valid = getattr(self.cls, "valid_num_types", None)
        if self.precisions and valid is not None:
            types = tuple(ScalarInfo(given[k]) for k in self.precisions)
            if types not in valid:
                raise self.error(given, f"unsupported precision {types}")
        try:
            info.instance(**{k: given[k] for k in self.controls + self.extras})
        except SporkError:
            raise
        except Exception as e:  # the user's own check (assert, ValueError, ...)
            raise self.error(given, f"{type(e).__name__}: {e}") from None
        return _to_instr(self, info, given, written)


def _template_params(cls: type, behavior: ir.Proc) -> tuple[tuple[str, ...], tuple[str, ...],
                                                              dict[str, Any]]:
    """Control template parameters (positional, naming control parameters of `behavior`) and
    extras (keyword-only) of `instance`, with the extras' defaults."""
    controls: list[str] = []
    extras: list[str] = []
    defaults: dict[str, Any] = {}
    control_args = {a.name.name for a in behavior.args if isinstance(a.typ, ir.Control)}
    params = list(inspect.signature(cls.instance).parameters.values())[1:]  # self
    for prm in params:
        if prm.kind is prm.POSITIONAL_OR_KEYWORD and prm.name in control_args:
            controls.append(prm.name)
        elif prm.kind is prm.KEYWORD_ONLY:
            extras.append(prm.name)
            if prm.default is not prm.empty:
                defaults[prm.name] = prm.default
        else:
            raise RejectedInput(f"{cls.__name__}.instance: parameter {prm.name} must name a "
                                f"size/index parameter of {cls.__name__}.behavior or be "
                                "keyword-only", code="ERR-P05", rule="LANG-3.11")
    return tuple(controls), tuple(extras), defaults


def _new_info(cls: type) -> Any:
    """An object of the user's class (so `instance` can call its helper methods) that is also
    an InstrInfo; the class's own `__init__` is not run, as upstream replaces it."""
    klass = cls if issubclass(cls, InstrInfo) else type(cls.__name__, (cls, InstrInfo), {})
    return object.__new__(klass)


def _base(typ: Any) -> str | None:
    if isinstance(typ, ir.Tensor):
        return typ.base
    if isinstance(typ, ir.Scalar):
        return typ.name
    return None


def _prefill(info: Any, behavior: ir.Proc, written: set[str], read: set[str],
             given: dict[str, Any]) -> None:
    info.instr_format = None
    info.c_utils, info.c_includes, info.cu_utils, info.cu_includes = [], [], [], []
    info.coll_unit = standalone_thread
    info.instr_tl = InstrTL.cpu_in_order_instr
    info.barrier_mechanism = None
    info.barrier_coll_units = ()
    info.access_info = {}
    for a in behavior.args:
        if isinstance(a.typ, ir.Control):
            continue
        name = a.name.name
        base = _base(a.typ)
        try:
            scalar = ScalarInfo(given.get(name) if base == "R" else base)
        except ValueError:
            scalar = None
        info.access_info[name] = AccessInfo(mem=a.mem, const=name not in written,
                                            write_only=name not in read, scalar_info=scalar)


def _effects(stmts: tuple[ir.Stmt, ...]) -> tuple[set[str], set[str]]:
    """Names of the behaviour's parameters it writes and reads (a `+=` does both)."""
    written: set[str] = set()
    read: set[str] = set()

    def reads_in(node: Any) -> None:
        if isinstance(node, (ir.Read, ir.Window)):
            read.add(node.buf.name)
        if isinstance(node, tuple):
            for x in node:
                reads_in(x)
        elif dataclasses.is_dataclass(node) and not isinstance(node, type) and \
                type(node).__module__ == ir.__name__:
            for f in dataclasses.fields(node):
                reads_in(getattr(node, f.name))

    def visit(s: ir.Stmt) -> None:
        match s:
            case ir.Assign(buf=buf, rhs=rhs):
                written.add(buf.name)
                reads_in(rhs)
            case ir.Reduce(buf=buf, rhs=rhs):
                written.add(buf.name)
                read.add(buf.name)
                reads_in(rhs)
            case ir.Call(callee=callee, args=args) if isinstance(callee, Instr):
                for prm, arg in zip(callee.params, args):
                    if isinstance(arg, (ir.Window, ir.Read)):
                        (read if prm.access == "r" else written).add(arg.buf.name)
                        if prm.access in ("rw", "a"):
                            read.add(arg.buf.name)
            case ir.For(body=body) | ir.If(body=body):
                for x in body + getattr(s, "orelse", ()):
                    visit(x)
            case _:
                reads_in(s)

    for s in stmts:
        visit(s)
    return written, read


def _dims(typ: Any, controls: dict[str, int]) -> tuple[int | str, ...]:
    from verifier.lang.ir.printer import expr_text

    out: list[int | str] = []
    for d in typ.shape if isinstance(typ, ir.Tensor) else ():
        value = _const_value(d, controls)
        out.append(value if value is not None else
                   d.name.name if isinstance(d, ir.Var) else expr_text(d))
    return tuple(out)


def _const_value(e: Any, controls: dict[str, int]) -> int | None:
    match e:
        case ir.Const(value=v) if isinstance(v, int) and not isinstance(v, bool):
            return v
        case ir.Var(name=sym) if sym.name in controls:
            return controls[sym.name]
        case ir.BinOp(op=op, lhs=lhs, rhs=rhs):
            a, b = _const_value(lhs, controls), _const_value(rhs, controls)
            if a is None or b is None or (op in ("/", "%") and b == 0):
                return None
            return {"+": a + b, "-": a - b, "*": a * b, "/": a // b if b else 0,
                    "%": a % b if b else 0}.get(op)
    return None


def _to_instr(t: InstrTemplate, info: Any, given: dict[str, Any], written: set[str]) -> Instr:
    """The `Instr` record of one instantiation; what cannot be modelled goes to `unmodelled`."""
    name = t.name
    if not isinstance(info.instr_tl, InstrTL):
        raise t.error(given, f"instr_tl must be an instr-tl such as cuda_in_order_instr, not "
                             f"{info.instr_tl!r}")
    if not isinstance(info.coll_unit, CollUnit):
        raise t.error(given, f"coll_unit must be a collective unit, not {info.coll_unit!r}")
    unmodelled: list[str] = []
    controls = {k: given[k] for k in t.controls}
    params: list[InstrParam] = []
    for a in t.behavior.args:
        pname = a.name.name
        if pname in controls:
            continue
        if isinstance(a.typ, ir.Control):
            params.append(InstrParam(pname, _CONTROL_PARAM[a.typ.kind]))
            continue
        ai: AccessInfo = info.access_info[pname]
        mem = ai.mem
        if not isinstance(mem, Memory):
            raise t.error(given, f"access_info[{pname!r}].mem must be a memory, not {mem!r}")
        if a.mem is not DRAM and mem != a.mem:
            raise t.error(given, f"cannot override mem for {pname} @ {a.mem}")
        access = "r" if ai.const else "w" if ai.write_only else "rw"
        quals: frozenset[QualTL] = frozenset()
        if ai.atomicity is not None:
            quals = frozenset(ai.atomicity.qual_tl_list)
            if not all(isinstance(q, QualTL) for q in quals) or ai.const:
                unmodelled.append(f"atomicity of {pname}")
            access = "a"
        units = tuple(ai.distributed_coll_units or ())
        if not all(isinstance(u, CollUnit) for u in units):
            raise t.error(given, f"distributed_coll_units of {pname} must be collective units")
        if ai.allow_out_of_bounds:
            unmodelled.append(f"out-of-bounds access allowed on {pname}")
        kind = "tensor" if isinstance(a.typ, ir.Tensor) else "scalar"
        params.append(InstrParam(pname, kind, access, mem.name, FixedShape(_dims(a.typ, controls)),
                                 quals, units, bool(ai.access_by_owner_only),
                                 None if ai.out_of_order is None else bool(ai.out_of_order)))
    mech = info.barrier_mechanism
    if mech is not None and not isinstance(mech, BarrierMechanism):
        raise t.error(given, f"barrier_mechanism must be a barrier mechanism, not {mech!r}")
    bound = tuple(sorted(given.items()))
    return Instr(name, tuple(params), info.instr_tl, info.coll_unit, t.controls,
                 trailing_mech=mech.name if mech is not None else None,
                 barrier_units=len(info.barrier_coll_units or ()), precisions=t.precisions,
                 extras=t.extras, bound=bound,
                 unmodelled=f"{name}: " + "; ".join(unmodelled) if unmodelled else None)


__all__ = ["AccessInfo", "AtomicityInfo", "InstrArgs", "InstrInfo", "InstrTemplate", "instr"]
