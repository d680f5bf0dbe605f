"""The emitted `.cu` files compile with nvcc for sm_80, sm_90a and sm_100a (no GPU needed).

The default test compiles every proved kernel in one translation unit per architecture (each
file is `#include`d, so it is also checked that files do not clash); the slow test compiles each
file on its own, which checks that every file is self-contained. The flags are the ones the
file's header names (`verifier.codegen.targets`); a file whose target is sm_90 or sm_90a is
compiled for sm_90a only, an sm_100a (tcgen05) file for sm_100a only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from codegen_support import (HERE, certified_or_none, default_cases, hand_certified, local,
                             proved_cases)
from conftest import default_first

from verifier.codegen import emit_cuda
from verifier.codegen.targets import NVCC_FLAGS
from verifier.diagnostics import Unsupported

_FALLBACK = Path("/usr/local/bin/nvcc")
NVCC = shutil.which("nvcc") or (str(_FALLBACK) if _FALLBACK.exists() else None)
ARCHS = ("sm_80", "sm_90a", "sm_100a")
FORGED = HERE / "codegen_forged.py"
FORGED_LOWERABLE = ("cluster_sync", "mbarrier_cluster")

pytestmark = [pytest.mark.nvcc, pytest.mark.skipif(NVCC is None, reason="nvcc not found")]


def _emit(cases: list[tuple[Path, str]], out: Path) -> dict[str, Path]:
    """`<name>.cu` under `out` for every case the verifier proves and codegen lowers."""
    files = {}
    for path, name in cases:
        found = certified_or_none(path, name)
        if found is None:  # not proved by the current verifier: no code to compile
            continue
        proc, cert = found
        target = out / f"{name}.cu"
        try:
            text = emit_cuda(proc, cert)
        except Unsupported:  # by design (mbarrier rings, ...): test_codegen_emit checks which
            continue
        if "kittens.cuh" in text:  # needs ThunderKittens' headers: test_codegen_tk.py
            continue
        target.write_text(text)
        files[name] = target
    return files


def _emit_with_forged(cases: list[tuple[Path, str]], out: Path) -> dict[str, Path]:
    files = _emit(cases, out)
    for name in FORGED_LOWERABLE:  # lowered ahead of the verifier: compile them too
        files[name] = out / f"{name}.cu"
        files[name].write_text(emit_cuda(*hand_certified(FORGED, name)))
    return files


@pytest.fixture(scope="module")
def emitted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The kernels of .ci/run (a kernel whose file says `# test: slow` is proved only under
    `-m slow`: `emitted_all`)."""
    return _emit_with_forged(proved_cases(slow=False), tmp_path_factory.mktemp("cu"))


@pytest.fixture(scope="module")
def emitted_default(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The kernels the default run lowers (`default_cases`)."""
    return _emit_with_forged(default_cases(), tmp_path_factory.mktemp("cu_default"))


@pytest.fixture(scope="module")
def emitted_all(emitted: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
                ) -> dict[str, Path]:
    """`emitted` and the kernels with long proofs."""
    quick = set(proved_cases(slow=False))
    more = [c for c in proved_cases() if c not in quick]
    return {**emitted, **_emit(more, tmp_path_factory.mktemp("cu_slow"))}


def file_target(text: str) -> str:
    """The target the header of an emitted file names."""
    line = next(x for x in text.splitlines() if x.startswith("// nvcc target "))
    return line.removeprefix("// nvcc target ").split(":")[0]


def _for_arch(files: dict[str, Path], arch: str) -> list[Path]:
    """sm_80 and sm_100a builds take their own files; sm_90a takes every file up to sm_90a
    (tcgen05 is not Hopper's, wgmma not Blackwell's)."""
    def fits(target: str) -> bool:
        return target == arch if arch != "sm_90a" else target != "sm_100a"
    return [f for f in files.values() if fits(file_target(f.read_text()))]


def nvcc(source: Path, arch: str) -> subprocess.CompletedProcess[str]:
    """Compile `source` for `arch` with the flags of `targets.NVCC_FLAGS`."""
    assert NVCC is not None
    cmd = [NVCC, "-std=c++17", *NVCC_FLAGS[arch], "-c", str(source), "-o",
           str(source.with_suffix(f".{arch}.o"))]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def write_files(tmp_path: Path, texts: dict[str, str]) -> list[Path]:
    """`<name>.cu` under `tmp_path` for every emitted text."""
    files = [tmp_path / f"{name}.cu" for name in texts]
    for f, text in zip(files, texts.values()):
        f.write_text(text)
    return files


def compile_together(tmp_path: Path, texts: dict[str, str], arch: str) -> None:
    """Write each emitted file, `#include` them all in one translation unit, compile it for
    `arch`, and require no error and no warning."""
    unit = tmp_path / f"unit_{arch}.cu"
    unit.write_text("".join(f'#include "{f}"\n' for f in write_files(tmp_path, texts)))
    result = nvcc(unit, arch)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "warning" not in result.stderr, result.stderr[-4000:]


@pytest.mark.parametrize("arch", [  # sm_90a by default, every arch in .ci/run (issue 20)
    pytest.param(a, marks=[] if a == "sm_90a" else [pytest.mark.extended]) for a in ARCHS])
@pytest.mark.parametrize("kernels", ["emitted_default", pytest.param(
    "emitted", marks=pytest.mark.extended)])  # every proved kernel: .ci/run (issue 20)
def test_every_proved_kernel_compiles(arch: str, kernels: str, request: pytest.FixtureRequest,
                                      tmp_path: Path) -> None:
    emitted = request.getfixturevalue(kernels)
    unit = tmp_path / f"all_{arch}.cu"
    unit.write_text("".join(f'#include "{f}"\n' for f in _for_arch(emitted, arch)))
    result = nvcc(unit, arch)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "warning" not in result.stderr, result.stderr[-4000:]


def compile_each(files: list[Path], arch: str) -> None:
    """Compile every file on its own (each must be self-contained), in parallel."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda f: (f, nvcc(f, arch)), files))
    failures = {f.name: r.stderr[-1500:] for f, r in results
                if r.returncode != 0 or "warning" in r.stderr}
    assert not failures, failures


@pytest.mark.slow
@pytest.mark.parametrize("arch", ARCHS)
def test_each_file_compiles_alone(arch: str, emitted_all: dict[str, Path]) -> None:
    compile_each(_for_arch(emitted_all, arch), arch)


@pytest.mark.rule("SEM-8.5")
@pytest.mark.rule("COLL-5.11")
@pytest.mark.parametrize("arch", [  # each arch compiles them in one unit by default; alone: .ci/run
    pytest.param(a, marks=[] if a == "sm_90a" else [pytest.mark.extended]) for a in ARCHS])
@pytest.mark.parametrize("name", default_first([("mbarrier_mixed_slices",),
                                                ("mbarrier_warp_slices",)]))
def test_mbarrier_slices_compile(name: str, arch: str, tmp_path: Path) -> None:
    # mbarriers allocated inside thread loops (one slice per iteration), each file on its own
    source = tmp_path / f"{name}.cu"
    source.write_text(emit_cuda(*local(name)))
    result = nvcc(source, arch)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "warning" not in result.stderr, result.stderr[-4000:]
