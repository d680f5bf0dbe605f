"""A kernel file's write outside its private folder goes to a private copy (SEC-2 still
refuses the real one), so files that dump output beside themselves, as every sporkbench file
does (`open(__file__ + ".json", "w")`), load unchanged; and a memory's name (`MemoryName`)
travels in the loading child's reply (SEC-1's allow-list). No upstream needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from verifier.load import sandbox

ROOT = Path(__file__).resolve().parent.parent

KERNEL = """\
from verifier.lang import *
import json


@proc
def scale(n: size, x: f32[n, 64] @ CudaGmemLinear):
    with CudaDeviceFunction(blockDim=64):
        for task in cuda_tasks(0, n):
            s: f32[64] @ CudaSmemLinear
            for t in cuda_threads(0, 64):
                s[t] = x[task, t]
            Fence(cuda_in_order, cuda_in_order)


json.dump([{"proc": "scale"}], open(__file__ + ".json", "w"))
"""


def _verify(path: Path) -> tuple[int, dict]:
    done = subprocess.run([sys.executable, "-m", "verifier.cli", str(path), "--format", "json",
                           "--no-progress", "--no-cache"], capture_output=True, text=True,
                          cwd=ROOT, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return done.returncode, json.loads(done.stdout)


@pytest.mark.rule("LOAD-6")
@pytest.mark.skipif(sandbox.landlock_abi() < 1, reason="no Landlock here: the file's write "
                    "is not confined, so it is not redirected either")
def test_a_write_beside_the_file_goes_to_a_private_copy(tmp_path: Path) -> None:
    kernel = tmp_path / "kernel.py"
    kernel.write_text(textwrap.dedent(KERNEL))
    code, report = _verify(kernel)
    (result,) = report["results"]
    assert code == 0 and result["verdict"] == "proved", report
    assert not kernel.with_name("kernel.py.json").exists()  # SEC-2: never written there
    assert f"the file wrote {kernel}.json; the write went to a private copy" in \
        result["load_output"]


@pytest.mark.rule("LOAD-9")
def test_a_memory_name_travels_in_the_reply() -> None:
    """A memory built while loading (a template's `Sm90_SmemSwizzled(128)`) is sent by value;
    its name is a `MemoryName`, which the reply's allow-list decodes (a str, no code run)."""
    import io
    import pickle

    from verifier.lang.stdlib.memories import MemoryName
    from verifier.load.load_protocol import _ReplyPickler, _ReplyUnpickler

    name = MemoryName("Sm90_SmemSwizzled", "Sm90_SmemSwizzled(128)")
    buf = io.BytesIO()
    _ReplyPickler(buf).dump(name)
    back = _ReplyUnpickler(io.BytesIO(buf.getvalue())).load()
    assert type(back) is MemoryName and back == name and back() == "Sm90_SmemSwizzled(128)"
    with pytest.raises(pickle.UnpicklingError, match="not part of spork-verify"):
        _ReplyUnpickler(io.BytesIO(pickle.dumps(io.StringIO("x")))).load()
