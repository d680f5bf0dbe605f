"""Upstream's module names resolve to spork-verify's stdlib while a user file loads (LOAD-6).

A kernel written for Exo-GPU imports `exo`, `exo.platforms.cuda`, `exo.stdlib.scheduling`, ...
`upstream_aliases()` puts modules under those names in `sys.modules` for the duration of one
load, each exposing the `verifier.lang` namespace, and restores whatever was there before
(the real exo-lang package, if installed, is never shadowed outside loading).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import sys
import types
from typing import Any, Iterator

from verifier.diagnostics import Unsupported
from verifier.lang.ir.ir import EXO_GPU_HINT

# Every module name upstream kernels and tests import from (exo-lang, camspork_jit branch).
UPSTREAM_MODULES = (
    "exo", "exo.API", "exo.core", "exo.core.memory", "exo.libs", "exo.libs.memories",
    "exo.libs.externs", "exo.scalars", "exo.platforms", "exo.platforms.cuda",
    "exo.platforms.Sm80", "exo.platforms.Sm90", "exo.platforms.Sm100",
    "exo.stdlib", "exo.stdlib.scheduling",
    "exo.stdlib.stdlib", "exo.spork",
)

# Issue 18 (upstream's endgame branch): the ThunderKittens wrappers serve the whole namespace,
# which holds the tk names (verifier/lang/stdlib/cuda_tk.py); `exo.core.LoopIR` serves only
# upstream's debug log (API-6), its other names stay missing.
TK_MODULES = (
    "exo.platforms.cuda_tk", "exo.platforms.kittens_impl", "exo.platforms.kittens_impl.tk_types",
    "exo.platforms.kittens_impl.tk_tile_ops", "exo.platforms.kittens_impl.tk_vec_ops",
    "exo.platforms.kittens_impl.tk_shared_to_register",
    "exo.platforms.kittens_impl.tk_shared_to_register_vec",
    "exo.platforms.kittens_impl.tk_global_to_register",
    "exo.platforms.kittens_impl.tk_global_to_shared",
)
OWN_NAME_MODULES = {"exo.core.LoopIR": "verifier.lang.stdlib.debug_log"}

# Imported by upstream files but meaningless without a GPU: importing works, using fails.
GPU_ONLY_MODULES = {
    "exo.spork.excut": "exo.spork.excut (traces of a kernel run on a GPU)",
}


def _missing(module: str, what: str | None = None) -> Any:
    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        thing = what or f"{module}.{name}"
        raise ImportError(f"{thing} is not part of spork-verify's stdlib (the names "
                          f"spork-verify supports are listed by `from verifier.lang import *`)")
    return __getattr__


class UnsupportedModule(Unsupported, ModuleNotFoundError):
    """An `exo.*` module spork-verify does not serve (upstream's own helper packages, e.g. a
    test's scheduling script): `unsupported` naming it (API-2), and still an ImportError for a
    file that catches one."""


class _Unserved(importlib.abc.MetaPathFinder):
    """Last on `sys.meta_path` while loading: an `exo.*` name nothing else found (API-2)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if _is_exo(name):
            raise UnsupportedModule(f"not supported by spork-verify: the module {name} (upstream "
                                    f"Exo-GPU's, not part of spork-verify's stdlib); "
                                    f"{EXO_GPU_HINT}", rule="API-2", code="ERR-V11")
        return None


def _build() -> dict[str, types.ModuleType]:
    import verifier.lang as lang  # deferred: verifier.lang imports the loader's neighbours

    exported = {name: getattr(lang, name) for name in lang.__all__}
    modules: dict[str, types.ModuleType] = {}
    served = {name: exported for name in UPSTREAM_MODULES + TK_MODULES}
    for name, source in OWN_NAME_MODULES.items():
        own = importlib.import_module(source)
        served[name] = {k: getattr(own, k) for k in own.__all__}
    for name, names in served.items():
        module = types.ModuleType(name, f"spork-verify's stand-in for upstream's {name}")
        module.__dict__.update(names)
        module.__all__ = list(names)
        module.__getattr__ = _missing(name)  # type: ignore[attr-defined]
        module.__path__ = []  # a package, so `import exo.platforms.cuda` walks through it
        modules[name] = module
    for name, what in GPU_ONLY_MODULES.items():
        module = types.ModuleType(name, f"spork-verify's stand-in for upstream's {name}")
        module.__all__ = []
        module.__getattr__ = _missing(name, what)  # type: ignore[attr-defined]
        modules[name] = module
    for name, module in modules.items():  # `import exo` then `exo.platforms.cuda` works
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(modules[parent], child, module)
    return modules


def _is_exo(name: str) -> bool:
    return name == "exo" or name.startswith("exo.")


@contextlib.contextmanager
def upstream_aliases() -> Iterator[None]:
    """`exo` and its submodules name spork-verify's stdlib inside the block; on leaving,
    `sys.modules` holds exactly the `exo*` entries it held before."""
    saved = {k: v for k, v in sys.modules.items() if _is_exo(k)}
    for name in saved:
        del sys.modules[name]
    sys.modules.update(_build())
    unserved = _Unserved()
    sys.meta_path.append(unserved)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(unserved)
        for name in [k for k in sys.modules if _is_exo(k)]:
            del sys.modules[name]
        sys.modules.update(saved)
