"""CUDA text of one `CudaDeviceFunction`: argument struct, task functions, persistent main
loop, `__global__` kernel, host launcher, and the launch site in the host function.

Reads a `DevicePlan` and the host `Env` at the launch site (how the CPU reaches each captured
value); produces top-level text and the launch-site lines. Every CPU value the kernel uses
travels by value in a `__grid_constant__` struct: control values, GMEM pointers and their
non-literal strides, grid constants. Tasks are the cuboid `cuda_tasks` nest enumerated
round-robin over clusters (innermost iterator fastest). With mbarriers, `exo_deviceSetup`
initialises the rings and an `exo_SyncState` (per-thread ring state, SEM-8.5) declared once
before the task loop is passed to every task; a tensor map travels by value (LANG-6.6), a
tensor-map parameter with its window offsets (CG-T1).
"""

from __future__ import annotations

import re
from dataclasses import replace

from verifier import collectives
from verifier.codegen import mbarrier_text as mbarrier
from verifier.codegen.device import TaskEmitter
from verifier.codegen.exprs import Env, View, cexpr
from verifier.codegen.names import Namer
from verifier.codegen.plan import DevicePlan
from verifier.diagnostics import InternalError
from verifier.lang.ir import ir
from verifier.lang.stdlib.config import CudaDeviceFunction

_LITERAL = re.compile(r"-?[0-9]+")
ARGS = "exo_deviceArgs"


def _task_name(warp: str) -> str:
    """`exo_deviceTask{cname}`: `_name`, or nothing for the unnamed config. Rules: COLL-4.6"""
    return f"exo_deviceTask_{warp}" if warp else "exo_deviceTask"


class KernelEmitter:
    """Lowers one device function. Rules: LANG-8.2, LANG-8.3, LANG-8.4, COLL-4.6"""

    def __init__(self, plan: DevicePlan, proc_name: str, namer: Namer) -> None:
        self.plan = plan
        self.namer = namer
        self.struct = f"exo_Cuda{plan.index}_{proc_name}"
        self.kernel = f"exo_deviceFunction{plan.index}_{proc_name}"
        self.launcher = f"exo_launch{plan.index}_{proc_name}"
        self.fields: list[str] = []
        self.inits: list[str] = []
        rings = plan.rings
        self.sync_param = f", {mbarrier.STATE_TYPE}& {mbarrier.STATE}" if rings else ""
        self.sync_arg = f", {mbarrier.STATE}" if rings else ""

    # ------------------------------------------------------------ captured values

    def capture(self, host: Env, ctrl_types: dict[ir.Sym, str]) -> Env:
        """Struct fields and their host initialisers; the kernel's view of each captured value.

        Rules: LANG-8.2, LANG-6.2"""
        kernel = Env()
        for sym in self.plan.captured:
            name = self.namer(sym)
            if sym in host.ctrl:
                self.fields.append(f"{ctrl_types[sym]} {name};")
                self.inits.append(f"exo_args.{name} = {host.ctrl[sym]};")
                kernel.ctrl[sym] = f"{ARGS}.{name}"
            elif sym in host.views:
                kernel.views[sym] = self.capture_view(name, host.views[sym])
            elif sym in host.tmaps:  # LANG-6.6: the descriptor travels in the argument struct
                self.fields.append(f"CUtensorMap {name};")
                tm = host.tmaps[sym]
                self.inits.append(f"exo_args.{name} = {tm.cname};")
                offsets = []
                for k, offset in enumerate(tm.offsets):  # CG-T1: a tensor-map parameter's
                    self.fields.append(f"int32_t exo_offset{k}_{name};")
                    self.inits.append(f"exo_args.exo_offset{k}_{name} = {offset};")
                    offsets.append(f"{ARGS}.exo_offset{k}_{name}")
                kernel.tmaps[sym] = replace(tm, cname=f"{ARGS}.{name}", offsets=tuple(offsets))
            else:
                raise InternalError(f"kernel uses {sym.name}, unknown at the launch site")
        return kernel

    def capture_view(self, name: str, view: View) -> View:
        field = f"{ARGS}.{name}"
        if view.scalar:
            self.fields.append(f"{view.ctype} {name};")
            self.inits.append(f"exo_args.{name} = {view.base};")
            return View(view.ctype, field, (), 0, True, 0, view.family)
        if view.family == "grid_constant":
            self.fields.append(f"{view.ctype} {name}[{view.elems}];")
            self.inits.append(f"memcpy(exo_args.{name}, {view.base}, sizeof(exo_args.{name}));")
            return View(view.ctype, field, view.strides, 0, False, 0, view.family)
        self.fields.append(f"{view.ctype}* {name};")
        self.inits.append(f"exo_args.{name} = {view.base};")
        strides = []
        for d, stride in enumerate(view.strides):
            if _LITERAL.fullmatch(stride):
                strides.append(stride)
                continue
            self.fields.append(f"int64_t exo_stride{d}_{name};")
            self.inits.append(f"exo_args.exo_stride{d}_{name} = {stride};")
            strides.append(f"{ARGS}.exo_stride{d}_{name}")
        return View(view.ctype, field, tuple(strides), 0, False, 0, view.family)

    # ------------------------------------------------------------ device code

    def warp_names(self) -> list[str]:
        return [w.name for w in self.plan.dev.warp_config]

    def task_functions(self, kernel: Env) -> list[str]:
        """One `exo_deviceTask<cname>` per warp name. Rules: COLL-4.6, LANG-8.4"""
        env = kernel.child()
        for loop in self.plan.task_loops:
            env.ctrl[loop.iter] = f"exo_task.{self.namer(loop.iter)}"
        names = self.warp_names()
        out: list[str] = []
        top = collectives.top_tiling(self.plan.dev)
        for warp in names:
            emitter = TaskEmitter(self.plan, self.namer, warp if len(names) > 1 else None)
            out += [f"    static __device__ __forceinline__ void {_task_name(warp)}(",
                    f"        char* exo_smem, const exo_DeviceArgs& {ARGS}, "
                    f"const exo_Task& exo_task{self.sync_param})", "    {"]
            out += emitter.block(self.plan.body, env, top, 2)
            out += ["    }", ""]
        return out

    def task_loop(self, warp: str, depth: int) -> list[str]:
        """Round-robin over the cuboid task nest; the CTAs of a cluster share a task.
        Rules: LANG-8.3"""
        pad = "    " * depth
        cluster = self.plan.dev.clusterDim
        loops = self.plan.task_loops
        first = "blockIdx.x" if cluster == 1 else f"blockIdx.x / {cluster}"
        step = "gridDim.x" if cluster == 1 else f"gridDim.x / {cluster}"
        out = [pad + f"for (int64_t exo_taskIndex = {first}; exo_taskIndex < exo_taskCount; "
               f"exo_taskIndex += {step}) {{",
               pad + "    [[maybe_unused]] int64_t exo_rem = exo_taskIndex;",
               pad + "    exo_Task exo_task;"]
        for k in range(len(loops) - 1, -1, -1):
            name = self.namer(loops[k].iter)
            value = f"exo_lo{k} + exo_rem % exo_count{k}" if k else f"exo_lo{k} + exo_rem"
            out.append(pad + f"    exo_task.{name} = static_cast<int_fast32_t>({value});")
            if k:
                out.append(pad + f"    exo_rem /= exo_count{k};")
        out += [pad + f"    {_task_name(warp)}(exo_smem, {ARGS}, exo_task{self.sync_arg});",
                pad + "}"]
        return out

    def main_loop(self, kernel: Env) -> list[str]:
        """`exo_deviceMainLoop`: task bounds, named-warp dispatch with setmaxnreg.
        Rules: LANG-8.3, LANG-8.4, COLL-4.6"""
        out = ["    static __device__ __forceinline__ void exo_deviceMainLoop(",
               f"        char* exo_smem, const exo_DeviceArgs& {ARGS})", "    {",
               "        // exo_TaskGenerator: the cuboid cuda_tasks nest"]
        for k, loop in enumerate(self.plan.task_loops):
            out += [f"        const int64_t exo_lo{k} = {cexpr(loop.lo, kernel)};",
                    f"        const int64_t exo_hi{k} = {cexpr(loop.hi, kernel)};",
                    f"        const int64_t exo_count{k} = exo_hi{k} > exo_lo{k} ? "
                    f"exo_hi{k} - exo_lo{k} : 0;"]
        counts = " * ".join(f"exo_count{k}" for k in range(len(self.plan.task_loops)))
        out.append(f"        const int64_t exo_taskCount = {counts};")
        if self.plan.rings:  # SEM-8.5: the rings continue across tasks
            out.append(f"        {mbarrier.STATE_TYPE} {mbarrier.STATE};")
        out += self.dispatch()
        return out + ["    }"]

    def dispatch(self) -> list[str]:
        dev: CudaDeviceFunction = self.plan.dev
        configs = dev.warp_config
        if len(configs) == 1:
            reg = configs[0].setmaxnreg
            head = [] if reg is None else [f"        {_setmaxnreg(configs[0], reg)}"]
            return head + self.task_loop(configs[0].name, 2)
        values = sorted({w.setmaxnreg or 0 for w in configs})
        tuned = any(w.setmaxnreg is not None for w in configs)
        out: list[str] = []
        if tuned:
            out.append("        int exo_nreg = 0;")
            for w in configs:
                if w.setmaxnreg is not None:
                    first, count = dev.warp_offset(w.name)
                    cond = _range("threadIdx.x", 32 * first, 32 * (first + count))
                    out.append(f"        if ({cond}) {{ exo_nreg = {w.setmaxnreg}; }}")
        for value in values:
            members = sorted((w for w in configs if (w.setmaxnreg or 0) == value),
                             key=lambda w: w.name)
            depth = 3 if tuned else 2
            pad = "    " * depth
            if tuned:
                out.append(f"        if (exo_nreg == {value}) {{")
                if value:
                    out.append(pad + _setmaxnreg(members[0], value))
            for w in members:
                first, count = dev.warp_offset(w.name)
                cond = _range("exo_tmp", 32 * first, 32 * (first + count))
                out.append(pad + f"if (int exo_tmp = threadIdx.x; {cond}) {{")
                out += self.task_loop(w.name, depth + 1)
                out.append(pad + "}")
            if tuned:
                out.append("        }")
        return out

    # ------------------------------------------------------------ assembly

    def top_level(self, kernel: Env) -> list[str]:
        """The struct with the device functions, the kernel and its launcher. Rules: LANG-8.2"""
        dev = self.plan.dev
        tasks = [f"        int_fast32_t {self.namer(lp.iter)};" for lp in self.plan.task_loops]
        body = self.task_functions(kernel) + self.main_loop(kernel)
        fields = [f"        {f}" for f in self.fields] or ["        char exo_unused;"]
        out = [f"// Lowered from the CudaDeviceFunction at {self.plan.stmt.loc}",
               f"struct {self.struct}", "{", "    struct exo_DeviceArgs", "    {", *fields,
               "    };", "", "    struct exo_Task", "    {", *tasks, "    };", "",
               f"    static constexpr unsigned exo_blockDim = {dev.blockDim};",
               f"    static constexpr unsigned exo_clusterDim = {dev.clusterDim};",
               f"    static constexpr unsigned exo_blocksPerSm = {dev.blocks_per_sm};",
               f"    static constexpr unsigned exo_smemBytes = {self.plan.smem_bytes};", "",
               *self.setup(), *body, "};", ""]
        out += [f"__global__ void __launch_bounds__({dev.blockDim}, {dev.blocks_per_sm})",
                f"{self.kernel}(const __grid_constant__ {self.struct}::exo_DeviceArgs {ARGS})",
                "{", *self.smem_base(),
                f"    {self.struct}::exo_deviceSetup(exo_smem, {ARGS});",
                f"    {self.struct}::exo_deviceMainLoop(exo_smem, {ARGS});",
                *self.cluster_exit(), "}", ""]
        return out + self.launcher_text()

    def smem_base(self) -> list[str]:
        """`exo_smem`, aligned at run time to the largest SMEM alignment (1024 bytes for
        128-byte-swizzled tiles; the plan reserved the slack). Rules: LANG-8.3, LANG-6.3"""
        align = self.plan.smem_align
        if align <= 128:
            return ["    extern __shared__ __align__(128) char exo_smem[];"]
        return ["    extern __shared__ __align__(128) char exo_smemBase[];",
                "    const uint32_t exo_misalign = static_cast<uint32_t>("
                f"__cvta_generic_to_shared(exo_smemBase)) % {align}u;",
                f"    char* const exo_smem = exo_smemBase + (exo_misalign ? {align}u - "
                "exo_misalign : 0u);"]

    def cluster_exit(self) -> list[str]:
        """With clusterDim > 1 and mbarriers, no CTA leaves while a peer may still arrive on
        its mbarriers or multicast into its SMEM (defence in depth: the verified task ends
        with a cluster-scope synchronization). `unsafe_no_shutdown_cluster_sync=True` drops
        it, as upstream does: the proof already orders every access, remote ones included,
        before each SMEM and mbarrier free (SEM-4.7). Rules: SEM-8.5, CG-X1"""
        dev = self.plan.dev
        if dev.clusterDim == 1 or not (self.plan.rings or self.plan.indexed) or \
                dev.unsafe_no_shutdown_cluster_sync:
            return []
        return ['    asm volatile("barrier.cluster.arrive.release;\\n\\t"',
                '                 "barrier.cluster.wait.acquire;" ::: "memory");']

    def setup(self) -> list[str]:
        """`exo_SyncState` and `exo_deviceSetup` (ring initialisation). Rules: SEM-8.5"""
        rings = self.plan.rings
        head = ["    static __device__ __forceinline__ void exo_deviceSetup(",
                f"        char* exo_smem, const exo_DeviceArgs& {ARGS})"]
        if not rings:
            return ["    // exo_deviceSetup: nothing to initialise (no mbarriers)."] + head + \
                ["    {", "    }", ""]
        names = {sym: self.namer(sym) for sym in rings}
        fields = mbarrier.state_fields(rings, names)
        proxy = mbarrier.uses_async_proxy(self.plan.stmt.body)
        return (["    // Per-thread mbarrier ring state (SEM-8.5), kept across tasks.",
                 f"    struct {mbarrier.STATE_TYPE}", "    {", *[f"        {f}" for f in fields],
                 "    };", "", "    // exo_deviceSetup: initialise the mbarrier rings."]
                + head + ["    {"] + [f"        {line}" for line in
                                      mbarrier.setup_lines(rings, proxy)] + ["    }", ""])

    def launcher_text(self) -> list[str]:
        """Grid = (#SMs rounded down to a multiple of clusterDim) x blocks_per_sm; the cluster
        attribute only when clusterDim > 1. Rules: LANG-8.2"""
        dev = self.plan.dev
        cluster, smem = dev.clusterDim, self.plan.smem_bytes
        out = [f"static void {self.launcher}(cudaStream_t exo_cudaStream, "
               f"const {self.struct}::exo_DeviceArgs& {ARGS})", "{",
               "    int exo_device = 0;", "    EXO_CUDA_CHECK(cudaGetDevice(&exo_device));",
               "    int exo_smCount = 0;",
               "    EXO_CUDA_CHECK(cudaDeviceGetAttribute(&exo_smCount, "
               "cudaDevAttrMultiProcessorCount, exo_device));",
               f"    const unsigned exo_gridDim = static_cast<unsigned>(exo_smCount / {cluster}"
               f" * {cluster} * {dev.blocks_per_sm});"]
        if smem > 48 * 1024:
            out.append(f"    EXO_CUDA_CHECK(cudaFuncSetAttribute({self.kernel}, "
                       f"cudaFuncAttributeMaxDynamicSharedMemorySize, {smem}));")
        if cluster > 8:
            out.append(f"    EXO_CUDA_CHECK(cudaFuncSetAttribute({self.kernel}, "
                       "cudaFuncAttributeNonPortableClusterSizeAllowed, 1));")
        out += ["    cudaLaunchConfig_t exo_config = {};",
                "    exo_config.gridDim = dim3(exo_gridDim, 1, 1);",
                f"    exo_config.blockDim = dim3({dev.blockDim}, 1, 1);",
                f"    exo_config.dynamicSmemBytes = {smem};",
                "    exo_config.stream = exo_cudaStream;"]
        if cluster > 1:
            out += ["    cudaLaunchAttribute exo_attrs[1];",
                    "    exo_attrs[0].id = cudaLaunchAttributeClusterDimension;",
                    f"    exo_attrs[0].val.clusterDim.x = {cluster};",
                    "    exo_attrs[0].val.clusterDim.y = 1;",
                    "    exo_attrs[0].val.clusterDim.z = 1;",
                    "    exo_config.attrs = exo_attrs;", "    exo_config.numAttrs = 1;"]
        out += [f"    EXO_CUDA_CHECK(cudaLaunchKernelEx(&exo_config, {self.kernel}, {ARGS}));",
                "}", ""]
        return out

    def launch_site(self) -> list[str]:
        """Host lines that fill the argument struct and launch on `exo_cudaStream`."""
        return (["{", f"    {self.struct}::exo_DeviceArgs exo_args = {{}};"]
                + [f"    {line}" for line in self.inits]
                + [f"    {self.launcher}(exo_cudaStream, exo_args);", "}"])


def _range(var: str, lo: int, hi: int) -> str:
    return f"{var} < {hi}" if lo == 0 else f"{var} >= {lo} && {var} < {hi}"


def _setmaxnreg(config: object, value: int) -> str:
    """setmaxnreg exists only in arch-specific targets (sm_90a, sm_100a); elsewhere, e.g. in
    the portable PTX nvcc also embeds, the hint is left out (register counts do not change the
    program's meaning)."""
    kind = "dec" if getattr(config, "setmaxnreg_dec", None) is not None else "inc"
    return (f'EXO_SETMAXNREG("setmaxnreg.{kind}.sync.aligned.u32 {value};");')


def emit_device_function(plan: DevicePlan, proc_name: str, namer: Namer, host: Env,
                         ctrl_types: dict[ir.Sym, str]) -> tuple[list[str], list[str]]:
    """(top-level text, launch-site lines) of one device function. Rules: LANG-8.2, LANG-8.3"""
    emitter = KernelEmitter(plan, proc_name, namer)
    kernel = emitter.capture(host, ctrl_types)
    top = emitter.top_level(kernel)
    return top, emitter.launch_site()
