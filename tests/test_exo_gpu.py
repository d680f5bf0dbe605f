"""Scheduling by the user's own Exo-GPU (specs/upstream_api.md SCHED-*).

The default run needs no upstream: procs in the form upstream's printer writes them (written
here by hand) are parsed and verified; a script calling a rewrite without the option ends in a
located ERR-V11 naming it; a bad interpreter is a usage error. The integration test runs only
when $SPORK_VERIFY_EXO_GPU_PYTHON names a Python with upstream Exo-GPU installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verifier.diagnostics import Unsupported
from verifier.encode import verify_proc
from verifier.load.load_isolated import load_isolated
from verifier.load.load_protocol import PrintedProc
from verifier.load.load_scheduled import ENV_VAR
from verifier.load.printed import NOTE, parse_printed
from verifier.results import Verdict

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "examples" / "exo_gpu" / "scale_scheduled.py"

# Upstream's printer: keyword template arguments, `unit=` spelled out, window bounds written
# in full, fences tagged with a `# Fence_N` comment, `/` for integer division.
EXCHANGE = """\
def exchange(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    assert n % 128 == 0
    with CudaDeviceFunction(clusterDim=1,
                            warp_config=[
                                CudaWarpConfig(name='all',
                                               count=4,
                                               setmaxnreg_dec=None,
                                               setmaxnreg_inc=None)
                            ]):
        for blk in cuda_tasks(0, n / 128):
            s: f32[128] @ CudaSmemLinear
            for t in cuda_threads(0, 128, unit=cuda_thread):
                s[t] = x[128 * blk + t]
            Fence(cuda_in_order, cuda_in_order)  # Fence_4711
            for t in cuda_threads(0, 128, unit=cuda_thread):
                y[128 * blk + t] = s[127 - t]
            Fence(cuda_in_order, cuda_in_order)  # Fence_4712
"""
READ_LINE = 16  # `y[...] = s[127 - t]` in EXCHANGE

WRAPPER = """\
def wrapper(n: size, x: f32[n] @ DRAM, y: f32[n] @ DRAM):
    assert n % 128 == 0
    d_x: f32[n] @ CudaGmemLinear
    d_y: f32[n] @ CudaGmemLinear
    cudaMemcpyAsync_htod_1f32(n, d_x[0:n], x[0:n])
    exchange(n, d_x, d_y)
    cudaMemcpyAsync_dtoh_1f32(n, y[0:n], d_y[0:n])
"""


def _printed(name: str, text: str, root: bool = True) -> PrintedProc:
    return PrintedProc(name, text, f"kernel.py@exo-gpu/{name}.py", root)


@pytest.mark.rule("SCHED-3")
def test_printed_text_is_parsed_and_proved() -> None:
    (p,) = parse_printed((_printed("exchange", EXCHANGE),))
    assert p.loc.file == "kernel.py@exo-gpu/exchange.py" and p.loc.line == 1
    result = verify_proc(p)
    assert result.verdict is Verdict.proved, [f.message for f in result.findings]


@pytest.mark.rule("SCHED-3")
def test_seeded_bug_in_printed_text_is_refuted_at_its_line() -> None:
    buggy = EXCHANGE.replace("            Fence(cuda_in_order, cuda_in_order)  # Fence_4711\n",
                             "")
    (p,) = parse_printed((_printed("exchange", buggy),))
    result = verify_proc(p)
    assert result.verdict is Verdict.refuted
    raw = [f for f in result.findings if f.kind.value == "RAW" and f.variable == "s"]
    assert raw and raw[0].counterexample is not None and raw[0].counterexample.replayed
    assert raw[0].loc.file == "kernel.py@exo-gpu/exchange.py"
    assert raw[0].loc.line == READ_LINE - 1  # the fence's line is gone


@pytest.mark.rule("SCHED-3", "CALL-1")
def test_a_printed_callee_is_resolved_by_name_and_inlined() -> None:
    texts = (_printed("exchange", EXCHANGE, root=False), _printed("wrapper", WRAPPER))
    (p,) = parse_printed(texts)  # only the file's own proc comes back
    assert p.name == "wrapper"
    assert verify_proc(p).verdict is Verdict.proved


@pytest.mark.rule("SCHED-3", "LOAD-9")
def test_printed_texts_travel_through_the_loading_child(tmp_path: Path) -> None:
    source = tmp_path / "kernel.py"
    source.write_text("raise SystemExit('the file itself is not run again')\n")
    loaded = load_isolated(source, 60, (_printed("exchange", EXCHANGE),))
    assert loaded.error is None and [p.name for p in loaded.procs] == ["exchange"]


@pytest.mark.rule("SCHED-4")
def test_printed_text_outside_the_front_end_is_unsupported_in_the_text() -> None:
    bad = EXCHANGE + "\nprint('not a proc')\n"
    with pytest.raises(Unsupported) as caught:
        parse_printed((_printed("exchange", bad),))
    assert caught.value.loc.file == "kernel.py@exo-gpu/exchange.py"
    assert caught.value.loc.line == EXCHANGE.count("\n") + 2


@pytest.mark.rule("SCHED-3")
def test_rejection_in_printed_text_says_it_is_the_printed_text() -> None:
    bad = EXCHANGE.replace("s[127 - t]", "s[t] + undefined_name")
    try:
        parse_printed((_printed("exchange", bad),))
    except Exception as e:  # noqa: BLE001 - the kind is checked below
        assert NOTE in str(getattr(e, "message", e)), e
        assert e.loc.file == "kernel.py@exo-gpu/exchange.py" and e.loc.line == READ_LINE
        return
    raise AssertionError("an undefined name in the printed text was accepted")


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    return subprocess.run([sys.executable, "-m", "verifier.cli", *args], cwd=ROOT,
                          env={**clean, **(env or {})}, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.rule("SCHED-1", "API-2")
def test_without_the_option_the_rewrite_is_located_and_names_it() -> None:
    done = _cli(str(SCRIPT), "--format", "json")
    assert done.returncode == 3, done.stderr
    (result,) = json.loads(done.stdout)["results"]
    (finding,) = result["findings"]
    assert result["verdict"] == "unsupported" and finding["code"] == "ERR-V11"
    line = next(i for i, text in enumerate(SCRIPT.read_text().splitlines(), 1)
                if "divide_loop(" in text)
    assert finding["location"]["line"] == line and finding["location"]["file"] == str(SCRIPT)
    assert "divide_loop" in finding["message"] and "--exo-gpu-python" in finding["message"]


@pytest.mark.rule("SCHED-1")
def test_a_rewrite_called_in_process_is_located_at_its_call() -> None:
    from verifier.lang import divide_loop

    with pytest.raises(Unsupported) as caught:
        divide_loop(None, "i", 4, ("a", "b"))  # this line
    assert caught.value.loc.file == __file__
    assert "divide_loop(None" in Path(__file__).read_text().splitlines()[
        caught.value.loc.line - 1]


@pytest.mark.rule("SCHED-5")
@pytest.mark.parametrize("python, words", [
    ("no/such/python", "no such file"),
    (".", "not an executable file"),
    (sys.executable, "upstream Exo-GPU cannot be imported there"),  # no Exo-GPU in ours
])
def test_a_bad_interpreter_is_a_usage_error(python: str, words: str) -> None:
    done = _cli(str(SCRIPT), "--exo-gpu-python", python)
    assert done.returncode == 2, done.stdout + done.stderr
    assert words in done.stderr and "Traceback" not in done.stderr + done.stdout


@pytest.mark.rule("SCHED-5")
def test_the_environment_variable_names_the_interpreter() -> None:
    done = _cli(str(SCRIPT), env={ENV_VAR: "no/such/python"})
    assert done.returncode == 2 and "no such file" in done.stderr


@pytest.mark.rule("SCHED-6")
def test_check_cert_reloads_the_file_behind_a_printed_text() -> None:
    from verifier.cli_cert import source_file

    assert source_file("k/kernel.py@exo-gpu/gemm.py") == "k/kernel.py"
    assert source_file("k/kernel.py") == "k/kernel.py"


UPSTREAM = os.environ.get(ENV_VAR)


@pytest.mark.rule("SCHED-2", "SCHED-6")
@pytest.mark.skipif(not UPSTREAM, reason=f"needs ${ENV_VAR}: a Python with upstream Exo-GPU "
                    "installed")
def test_a_script_scheduled_by_upstream_is_verified_end_to_end() -> None:
    done = _cli(str(SCRIPT), "--format", "json", "--exo-gpu-python", str(UPSTREAM))
    assert done.returncode == 0, done.stdout + done.stderr
    (result,) = json.loads(done.stdout)["results"]
    assert result["proc"] == "scale" and result["verdict"] == "proved"
    origin = result["scheduled_by"]
    assert origin["tool"] == "exo-gpu" and origin["text_file"].endswith("@exo-gpu/scale.py")
    assert len(origin["text_sha256"]) == 64 and origin["exo_version"]


@pytest.mark.rule("SCHED-2")
@pytest.mark.skipif(not UPSTREAM, reason=f"needs ${ENV_VAR}: a Python with upstream Exo-GPU "
                    "installed")
def test_procs_a_call_returns_come_from_upstream_as_in_the_conformance_harness() -> None:
    from verifier.load.load_scheduled import load_by_exo_gpu

    loaded = load_by_exo_gpu(str(SCRIPT), str(UPSTREAM), 120.0, "[scale, scale]")
    assert loaded.error is None and [p.name for p in loaded.procs] == ["scale"]
    assert verify_proc(loaded.procs[0]).verdict is Verdict.proved
