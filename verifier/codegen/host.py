"""CUDA text of the host function: CPU-scope statements and kernel launches.

Reads a proc; produces the host function `void <proc>(cudaStream_t exo_cudaStream, ...)` and the
top-level text of every device function it launches. Arguments: control values by value
(`int64_t`, `bool`), every data argument by pointer (windows as `exo_win_<rank><type>` structs).
`assert`s lower to `EXO_ASSUME`; DRAM and GMEM allocations are freed at the end of their block
(GMEM stream-ordered); a tensor-map parameter is the caller's `CUtensorMap` and its window's offsets
(CG-T1). Calls of procs are inlined before (CG-C1). Non-goals: `par` loops (OpenMP).
"""

from __future__ import annotations

from collections.abc import Mapping

from verifier.codegen.exprs import Env, View, c_mul, cexpr, dense_strides, window_view
from verifier.codegen.instrs import lower_host_call
from verifier.codegen.kernel import emit_device_function
from verifier.codegen.names import Namer, control_ctype, ctype_of
from verifier.codegen.mbarrier import MbarrierRing
from verifier.codegen.plan import plan_device_function
from verifier.codegen.tensormap import (host_lines, mentions_stride_of, new_tensor_map, param_map,
                                        param_maps, walk_ir)
from verifier.codegen.tma import TMA_ROWS, used_tensor_maps
from verifier.diagnostics import InternalError, UnhandledNode, Unsupported
from verifier.lang.ir import ir
from verifier.lang.ir.printer import expr_text
from verifier.lang.ir.lifetimes import early_releases
from verifier.lang.stdlib.memories import Memory


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line if line else line for line in lines]


def window_struct(rank: int, base: str) -> str:
    return f"exo_win_{rank}{base}"


def _only_tma_through(proc: ir.Proc, maps: Mapping[ir.Sym, object]) -> None:
    """A tensor-map parameter has no data pointer here, only the caller's map: any use but a
    TMA through it is `Unsupported`. Rules: CG-T1"""
    def visit(node: object) -> None:
        if isinstance(node, (ir.Read, ir.Assign, ir.Reduce)) and node.buf in maps:
            use, buf = "an element access", node.buf
        elif isinstance(node, ir.Call) and getattr(node.callee, "name", "") not in TMA_ROWS:
            bufs = [a.buf for a in node.args if isinstance(a, ir.Window) and a.buf in maps]
            if not bufs:
                return
            use, buf = f"a call of {getattr(node.callee, 'name', node.callee)}", bufs[0]
        else:
            return
        raise Unsupported(f"{use} of the tensor-map parameter {buf.name}: only TMA "
                          "instructions go through it (its data pointer is inside the caller's "
                          "CUtensorMap)", node.loc, code="ERR-V11", rule="CG-T1")
    walk_ir(proc.body, visit)


class HostEmitter:
    """Walks CPU scope; collects device-function text in `top`. Rules: LANG-8.1..8.6"""

    def __init__(self, proc: ir.Proc, namer: Namer,
                 releases: dict[str, str] | None = None,
                 assumptions: tuple[tuple[str, int], ...] = ()) -> None:
        self.proc = proc
        self.assumptions = assumptions  # the certificate's assumed sizes (CLI-11, CG-A1)
        self.releases = releases or {}  # the certificate's early releases (CG-R1)
        self.candidates = tuple(early_releases(proc.body))
        self.namer = namer
        self.ctrl_types: dict[ir.Sym, str] = {}
        self.top: list[str] = []
        self.window_structs: dict[str, tuple[int, str]] = {}
        self.devices = 0
        self.rings: list[MbarrierRing] = []  # of every device function (SEM-8.5)
        self.tensor_maps = False  # some CPU-scope tensor map is encoded (LANG-6.6)
        self.map_structs: set[int] = set()  # ranks of tensor-map parameters (CG-T1)
        self.used_maps = used_tensor_maps(proc.body)

    # ------------------------------------------------------------ signature

    def signature(self) -> tuple[str, Env]:
        """Parameter list and the environment of the arguments. Rules: LANG-8.2"""
        env = Env()
        params = ["cudaStream_t exo_cudaStream"]
        for a in self.proc.args:
            if isinstance(a.typ, ir.Control):
                self.ctrl_types[a.name] = control_ctype(a.typ.kind)
                env.ctrl[a.name] = self.namer(a.name)
        maps = param_maps(self.proc)
        _only_tma_through(self.proc, maps)
        for a in self.proc.args:
            name = self.namer(a.name)
            family = a.mem.family if isinstance(a.mem, Memory) else "host"
            if a.name in maps:  # CG-T1: the caller's CUtensorMap and the window's offsets
                tm = param_map(a, maps[a.name], name)
                self.map_structs.add(tm.rank)
                self.tensor_maps = True
                params.append(f"struct exo_tensorMapWindow{tm.rank} {name}")
                env.tmaps[a.name] = tm
                continue
            match a.typ:
                case ir.Control(kind=kind):
                    params.append(f"{control_ctype(kind)} {name}")
                case ir.Scalar(name=base):
                    ctype = ctype_of(base)
                    params.append(f"{ctype}* {name}")
                    env.views[a.name] = View(ctype, f"(*{name})", (), 0, True, 0, family)
                case ir.Tensor(base=base, shape=shape, window=True):
                    struct = window_struct(len(shape), base)
                    self.window_structs[struct] = (len(shape), ctype_of(base))
                    params.append(f"struct {struct} {name}")
                    strides = tuple(f"{name}.strides[{k}]" for k in range(len(shape)))
                    env.views[a.name] = View(ctype_of(base), f"{name}.data", strides, 0, False,
                                             0, family)
                case ir.Tensor(base=base, shape=shape):
                    ctype = ctype_of(base)
                    params.append(f"{ctype}* {name}")
                    env.views[a.name] = self.dense(ctype, name, shape, env, family)
                case ir.BarrierType():
                    raise Unsupported("barrier arguments are not supported", a.loc,
                                      code="ERR-V11", rule="LANG-8.2")
                case _:
                    raise UnhandledNode(a.typ)
        return ", ".join(params), env

    def assumption_checks(self, env: Env) -> list[str]:
        """The proof holds only for the assumed sizes, which the source does not state: the
        host function checks them before anything runs, and on a violation names it on
        stderr and returns without launching. Rules: CG-A1, CLI-11"""
        by_name = {a.name.name: a.name for a in self.proc.args}
        out = []
        for name, value in self.assumptions:
            var = env.ctrl[by_name[name]]
            message = (f"spork-verify: {self.proc.name} is proved only for {name} == {value} "
                       f"(--assume {name}={value}), called with {name} == %lld: not launched")
            out += [f"if ({var} != {value}) {{  // --assume {name}={value} (CG-A1)",
                    f'    fprintf(stderr, "{message}\\n", (long long){var});',
                    "    return;", "}"]
        return out

    @staticmethod
    def dense(ctype: str, base: str, shape: tuple[ir.Expr, ...], env: Env,
              family: str) -> View:
        dims = [cexpr(d, env) for d in shape]
        elems = "1"
        for d in dims:
            elems = c_mul(elems, d)
        return View(ctype, base, dense_strides(dims), 0, False, 0, family, elems)

    def function(self) -> list[str]:
        params, env = self.signature()
        body = self.assumption_checks(env)
        maps = {sym for sym, tm in env.tmaps.items() if tm.offsets}
        for pred in self.proc.preds:
            if mentions_stride_of(pred, maps):  # CG-T1: inside the caller's CUtensorMap
                body.append(f"// assert {expr_text(pred)}: a stride of a tensor-map parameter, "
                            "held by the caller's map (CG-T1)")
            else:
                body.append(f"EXO_ASSUME({cexpr(pred, env)});")
        body += self.block(self.proc.body, env)
        return [f'extern "C" void {self.proc.name}({params})', "{", *_indent(body), "}"]

    # ------------------------------------------------------------ statements

    def block(self, stmts: tuple[ir.Stmt, ...], env: Env) -> list[str]:
        """Lines of a block (unindented), ending with the frees of its allocations."""
        env = env.child()
        out: list[str] = []
        frees: list[str] = []
        for s in stmts:
            out += self.stmt(s, env, frees)
        return out + list(reversed(frees))

    def stmt(self, s: ir.Stmt, env: Env, frees: list[str]) -> list[str]:
        match s:
            case ir.Pass():
                return []
            case ir.Alloc():
                return self.alloc(s, env, frees)
            case ir.Assign(buf=buf, idx=idx, rhs=rhs) | ir.Reduce(buf=buf, idx=idx, rhs=rhs):
                view = env.view(buf)
                lhs = view.element([cexpr(i, env) for i in idx], s.loc)
                op = "=" if isinstance(s, ir.Assign) else "+="
                return [f"{lhs} {op} {cexpr(rhs, env, view.ctype)};"]
            case ir.WindowStmt(rhs=rhs, special=None) if rhs.buf in env.tmaps and \
                    rhs.buf not in env.views:
                return []  # CG-T1: a window of a tensor-map parameter; TMAs name the map
            case ir.WindowStmt(rhs=rhs, special=special, name=name):
                view = window_view(rhs, env)
                if special is None:
                    env.views[name] = view
                    return []
                if name not in self.used_maps:
                    return [f"// {name.name}: a tensor map no TMA goes through, not encoded "
                            "(LANG-6.6)"]
                tm = new_tensor_map(s, view, self.namer(name))
                env.tmaps[name] = tm
                self.tensor_maps = True
                return host_lines(tm, s, env)
            case ir.If(cond=cond, body=body, orelse=orelse):
                out = [f"if ({cexpr(cond, env)}) {{"] + _indent(self.block(body, env))
                if orelse:
                    out += ["} else {"] + _indent(self.block(orelse, env))
                return out + ["}"]
            case ir.For(iter=it, lo=lo, hi=hi, mode=ir.Seq(), body=body):
                var = self.namer(it)
                self.ctrl_types[it] = "int64_t"
                inner = env.child()
                inner.ctrl[it] = var
                return ([f"for (int64_t {var} = {cexpr(lo, env)}; {var} < {cexpr(hi, env)}; "
                         f"{var}++) {{"] + _indent(self.block(body, inner)) + ["}"])
            case ir.For(mode=ir.Par()):
                raise Unsupported("codegen of par loops is not supported", s.loc,
                                  code="ERR-V11", rule="LANG-4.11")
            case ir.For():
                raise InternalError("cuda_tasks/cuda_threads loop at CPU scope", s.loc)
            case ir.DeviceFunction():
                plan = plan_device_function(s, self.devices, tuple(env.tmaps.values()),
                                            self.releases, self.candidates)
                self.devices += 1
                self.rings += plan.rings.values()
                self.rings += [r.ring for r in plan.indexed.values()]  # their wait helpers
                top, launch = emit_device_function(plan, self.proc.name, self.namer, env,
                                                   self.ctrl_types)
                self.top += top
                return launch
            case ir.Call():
                return lower_host_call(s, env)
            case ir.Arrive() | ir.Await():
                raise Unsupported("codegen of Arrive/Await is not supported yet", s.loc,
                                  code="ERR-V11", rule="SEM-8.3")
            case ir.Fence() | ir.Warps():
                raise InternalError("synchronization or CudaWarps at CPU scope", s.loc)
            case _:
                raise UnhandledNode(s)

    def alloc(self, s: ir.Alloc, env: Env, frees: list[str]) -> list[str]:
        """DRAM: stack scalar or malloc; GMEM: cudaMallocAsync/cudaFreeAsync on the stream;
        grid constants: host locals copied into the kernel's struct. Rules: LANG-6.1, LANG-6.2,
        LANG-8.6"""
        mem = s.mem
        name = self.namer(s.name)
        if isinstance(s.typ, ir.BarrierType):
            raise Unsupported("codegen of barrier variables is not supported yet", s.loc,
                              code="ERR-V11", rule="LANG-5.2")
        if not isinstance(mem, Memory):
            raise InternalError(f"{s.name.name}: memory {mem!r}", s.loc)
        base = ir.element_type(s.typ) or ""
        ctype = ctype_of(base)
        shape = s.typ.shape if isinstance(s.typ, ir.Tensor) else ()
        if not shape:
            if mem.family not in ("host", "grid_constant"):
                raise InternalError(f"scalar {s.name.name} @ {mem} at CPU scope", s.loc)
            env.views[s.name] = View(ctype, name, (), 0, True, 0, mem.family)
            return [f"{ctype} {name};"]
        view = self.dense(ctype, name, shape, env, mem.family)
        env.views[s.name] = view
        size = f"sizeof({ctype}) * {view.elems}" if view.elems != "1" else f"sizeof({ctype})"
        match mem.family:
            case "host":
                frees.append(f"free({name});")
                return [f"{ctype}* {name} = static_cast<{ctype}*>(malloc({size}));"]
            case "gmem":
                frees.append(f"EXO_CUDA_CHECK(cudaFreeAsync({name}, exo_cudaStream));")
                return [f"{ctype}* {name} = nullptr;",
                        f"EXO_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&{name}), "
                        f"{size}, exo_cudaStream));"]
            case "grid_constant":
                return [f"{ctype} {name}[{view.elems}];"]
            case _:
                raise InternalError(f"{s.name.name} @ {mem} allocated at CPU scope", s.loc)
