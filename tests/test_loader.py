"""Isolated loading (specs/loading.md, LOAD-1..LOAD-9): whatever a file does while it loads
(exit, crash, hang, print, spawn) ends as a located `rejected` result, never as the verifier's
own exit, a traceback or a corrupted report; the IR that comes back verifies as in-process IR.
"""

from __future__ import annotations

import json
import math
import os
import textwrap
import time
from pathlib import Path

import pytest

from verifier.cli import main
from verifier.encode import verify_proc
from verifier.load.load import load_procs
from verifier.load.load_isolated import load_isolated
from verifier.load.load_protocol import LoadReply, Stage, encode_reply, read_reply
from verifier.lang.ir.printer import ir_hash
from verifier.results import Verdict

from process_support import descendants, start_cli, stop_limit_s
from conftest import EXAMPLES

KERNEL = '''
@proc
def {name}(n: size, x: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            for t in cuda_threads(0, 256):
                x[256 * blk + t] = 1.0
'''
SIBLING_HEAD = "from __future__ import annotations\nfrom verifier.lang import *\n"
RACY = '''
@proc
def racy(n: size, x: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            for t in cuda_threads(0, 256):
                x[blk] = 1.0
'''


def write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text("from verifier.lang import *\n" + textwrap.dedent(body))
    return path


def line_of(path: Path, text: str) -> int:
    return next(i for i, s in enumerate(path.read_text().splitlines(), 1) if text in s)


def run_json(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, dict, str]:
    code = main(["--format", "json", *map(str, args)])
    out = capsys.readouterr()
    return code, json.loads(out.out), out.err


@pytest.mark.parametrize("call, said", [
    ("sys.exit(0)", "sys.exit(0)"), ("sys.exit()", "sys.exit(None)"),
    ("os._exit(0)", "os._exit(0)"), ("os._exit(3)", "os._exit(3)"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt"),
])
def test_exit_while_loading_is_a_located_rejection(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, call: str, said: str) -> None:
    path = write(tmp_path, "k.py", KERNEL.format(name="k") + f"""
import os, sys
print("about to leave")
{call}
""")
    code, doc, err = run_json(capsys, path)
    assert code == 2, doc
    (res,) = doc["results"]
    assert res["verdict"] == "rejected" and res["proc"] == "<file>"
    (finding,) = res["findings"]
    assert said in finding["message"] and finding["code"] == "ERR-P00"
    assert finding["location"]["file"] == str(path)
    assert finding["location"]["line"] == line_of(path, call)
    assert "Traceback" not in err


def test_endless_loop_times_out_at_its_line(capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    path = write(tmp_path, "hang.py", KERNEL.format(name="k") + """
count = 0
while True:
    count += 1
""")
    # the limit counts the child's start-up too: on a loaded machine it is stretched by the
    # load per core, so that the file reaches its loop before the limit ends it (LOAD-7)
    limit = math.ceil(stop_limit_s(1.0))
    start = time.monotonic()
    code, doc, _ = run_json(capsys, "--load-timeout", limit, path)
    assert time.monotonic() - start < limit + stop_limit_s(9.0)
    assert code == 2
    (finding,) = doc["results"][0]["findings"]
    assert f"did not finish within {limit} s" in finding["message"]
    assert "--load-timeout" in finding["message"]
    assert finding["location"]["line"] in (line_of(path, "while True"),
                                           line_of(path, "count += 1"))


def test_native_crash_is_a_located_rejection(tmp_path: Path) -> None:
    path = write(tmp_path, "crash.py", "import ctypes\nctypes.string_at(0)\n")
    loaded = load_isolated(path)
    assert loaded.error is not None and loaded.error.code == "ERR-P00"
    assert "SIGSEGV" in loaded.error.message
    assert loaded.error.loc.line == line_of(path, "string_at")


def test_file_sees_a_script_like_process(tmp_path: Path) -> None:
    """argv is the file, stdin is at end of file, the working directory is not on sys.path."""
    path = write(tmp_path, "env.py", KERNEL.format(name="k") + """
import os, sys
assert sys.argv == [__file__], sys.argv
assert sys.stdin.read() == ""
assert "" not in sys.path and sys.path[0] == os.path.dirname(__file__)
""")
    loaded = load_isolated(path)
    assert loaded.error is None, loaded.error.render()


def test_exception_in_entry_file_is_located(tmp_path: Path) -> None:
    path = write(tmp_path, "boom.py", KERNEL.format(name="k") + "\nvalue = {}['missing']\n")
    loaded = load_isolated(path)
    assert loaded.error is not None and "KeyError" in loaded.error.message
    assert loaded.error.loc == type(loaded.error.loc)(str(path), line_of(path, "missing"), 1)


def test_printing_buggy_file_keeps_json_valid_and_exit_code(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Output of the file, even forged JSON on fd 1, stays out of the report (LOAD-8)."""
    path = write(tmp_path, "noisy.py", RACY + """
import os, sys
print('{"tool": "spork-verify", "results": []}')
sys.__stdout__.write("garbage on the real stdout\\n")
os.write(1, b"raw bytes on fd 1\\n")
print("and on stderr", file=sys.stderr)
print("\\x1b[2Jclear screen")
""")
    code, doc, err = run_json(capsys, path)
    assert code == 1
    (res,) = doc["results"]
    assert res["proc"] == "racy" and res["verdict"] == "refuted"
    assert "garbage on the real stdout" in res["load_output"]
    assert "raw bytes on fd 1" in res["load_output"] and "and on stderr" in res["load_output"]
    assert "garbage" not in err
    code = main([str(path)])
    out = capsys.readouterr().out
    assert code == 1 and "garbage" not in out and "printed 5 line(s) while loading" in out
    main(["-v", str(path)])
    out = capsys.readouterr().out
    assert "  | garbage on the real stdout" in out
    assert "  | \\x1b[2Jclear screen" in out and "\x1b" not in out


def test_file_cannot_forge_the_reply(capsys: pytest.CaptureFixture[str],
                                     tmp_path: Path) -> None:
    """Writing garbage to every inherited descriptor corrupts neither reply nor report."""
    path = write(tmp_path, "forger.py", KERNEL.format(name="k") + """
import os
for fd in range(64):
    try:
        os.write(fd, b'SPORKLD1 forged reply ' * 64)
    except OSError:
        pass
""")
    code, doc, _ = run_json(capsys, path)
    assert code == 0, doc
    assert [r["verdict"] for r in doc["results"]] == ["proved"]


def test_processes_started_by_the_file_do_not_outlive_loading(tmp_path: Path) -> None:
    path = write(tmp_path, "spawner.py", KERNEL.format(name="k") + """
import subprocess
child = subprocess.Popen(["sleep", "60"])
print("pid", child.pid)
""")
    loaded = load_isolated(path)
    assert loaded.error is None and [p.name for p in loaded.procs] == ["k"]
    pid = int(loaded.output.split()[1])  # the file can write nowhere but its own folder (SEC-2)
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    pytest.fail(f"process {pid} started while loading is still running")


def test_one_proc_under_two_names_is_verified_once(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    path = write(tmp_path, "alias.py", KERNEL.format(name="k") + "\nalias = k\nagain = alias\n")
    code, doc, _ = run_json(capsys, path)
    assert code == 0 and [r["proc"] for r in doc["results"]] == ["k"]


def test_two_proc_defs_with_one_name_are_rejected_at_the_second(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, "twice.py", KERNEL.format(name="k") + RACY.replace("racy", "k"))
    code, doc, _ = run_json(capsys, path)
    assert code == 2
    (res,) = doc["results"]
    (finding,) = res["findings"]
    assert finding["code"] == "ERR-P40" and finding["variable"] == "k"
    defs = [i for i, s in enumerate(path.read_text().splitlines(), 1) if s.startswith("def k")]
    assert finding["location"]["line"] == defs[1]
    assert f"line {defs[0] - 1}" in finding["message"] or f"line {defs[0]}" in finding["message"]


def test_a_proc_and_its_scheduled_copy_are_both_verified(tmp_path: Path) -> None:
    path = write(tmp_path, "copy.py", KERNEL.format(name="k") + "\nk_simple = simplify(k)\n")
    loaded = load_isolated(path)
    assert loaded.error is None
    assert [p.name for p in loaded.procs] == ["k", "k"]
    assert loaded.procs[0] is not loaded.procs[1]


def test_parse_error_raises_at_decoration_time(tmp_path: Path) -> None:
    """Upstream raises from @proc; the error names the proc and its location (LOAD-3)."""
    path = write(tmp_path, "caught.py", KERNEL.format(name="k").replace("x[256", "y[256") + """
""")
    from verifier.diagnostics import SporkError

    with pytest.raises(SporkError) as info:
        load_procs(path)
    assert info.value.proc == "k" and info.value.loc.line == line_of(path, "y[256")
    loaded = load_isolated(path)
    assert loaded.error is not None and loaded.error.proc == "k"
    assert loaded.error.loc == info.value.loc and loaded.error.code == info.value.code


def test_user_can_catch_the_decoration_error(tmp_path: Path) -> None:
    """As in upstream's tests: `try: @proc ... except Exception` keeps the file going."""
    path = write(tmp_path, "tests_style.py", """
try:
    @proc
    def bad(n: size, x: f32[n] @ CudaGmemLinear):
        y[0] = 1.0
except Exception as e:
    assert "y" in str(e)
""" + KERNEL.format(name="k"))
    loaded = load_isolated(path)
    assert loaded.error is None and [p.name for p in loaded.procs] == ["k"]


@pytest.mark.parametrize("name", ["smem_exchange.py", "gemm_sm80.py", "cp_async_stage.py",
                                  "gemm_sm80_ws.py", "smem_exchange_bug_nofence.py"])
def test_ir_from_the_child_verifies_like_in_process_ir(name: str) -> None:
    """Stdlib objects (instrs with callables, memories, units) travel by name (LOAD-9)."""
    here = load_procs(EXAMPLES / name)
    loaded = load_isolated(EXAMPLES / name)
    assert loaded.error is None
    assert [ir_hash(p) for p in loaded.procs] == [ir_hash(p) for p in here]
    if name.startswith("smem_exchange"):
        verdicts = {verify_proc(p).verdict for p in loaded.procs + tuple(here)}
        assert verdicts == {Verdict.refuted if "bug" in name else Verdict.proved}


def test_reply_frame_rejects_truncated_or_foreign_data(tmp_path: Path) -> None:
    with open(tmp_path / "reply", "w+b") as f:
        data = encode_reply(LoadReply(Stage.started, startup_s=0.5))
        f.write(data)
        f.flush()
        reply = read_reply(f.fileno())
        assert reply is not None and reply.stage is Stage.started
        f.truncate(len(data) - 1)
        assert read_reply(f.fileno()) is None
        f.seek(0)
        f.write(b"x" * len(data))
        f.flush()
        assert read_reply(f.fileno()) is None


def test_load_timeout_must_be_positive(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("0", "-1", "nan", "inf", "soon"):
        assert main(["--load-timeout", bad, str(EXAMPLES / "saxpy.py")]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_check_cert_uses_isolated_ir(capsys: pytest.CaptureFixture[str],
                                     tmp_path: Path) -> None:
    out_dir = tmp_path / "cu"
    assert main(["--emit-cuda", str(out_dir), str(EXAMPLES / "saxpy.py")]) == 0
    capsys.readouterr()
    noisy = tmp_path / "saxpy.py"
    noisy.write_text((EXAMPLES / "saxpy.py").read_text() + "\nprint('hello')\n")
    assert main(["--check-cert", str(out_dir / "saxpy.cu"), str(noisy)]) == 0
    assert "matches" in capsys.readouterr().out
    exiting = tmp_path / "exiting.py"
    exiting.write_text((EXAMPLES / "saxpy.py").read_text() + "\nimport sys\nsys.exit(0)\n")
    assert main(["--check-cert", str(out_dir / "saxpy.cu"), str(exiting)]) == 2
    assert "sys.exit(0)" in capsys.readouterr().err


def test_error_in_a_sibling_module_is_reported_there(tmp_path: Path) -> None:
    """LOAD-3: the sibling's file and line, not the entry file's `import` line."""
    (tmp_path / "helpers.py").write_text("SIZE = 256\n\n\ndef tile():\n    return SIZE // 0\n")
    (tmp_path / "config_mod.py").write_text("from helpers import tile\n\nTILE = tile()\n")
    path = write(tmp_path, "entry.py", "from config_mod import TILE\n" + KERNEL.format(name="k"))
    loaded = load_isolated(path)
    assert loaded.error is not None and "ZeroDivisionError" in loaded.error.message
    assert loaded.error.loc.file == str(tmp_path / "helpers.py")
    assert loaded.error.loc.line == 5


def test_proc_error_in_a_sibling_module_names_the_proc_there(tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text(SIBLING_HEAD +
                                         KERNEL.format(name="lib_k").replace("x[256", "z[256"))
    path = write(tmp_path, "entry.py", "from kernels import lib_k\n")
    loaded = load_isolated(path)
    assert loaded.error is not None and loaded.error.proc == "lib_k"
    assert loaded.error.loc.file == str(tmp_path / "kernels.py")
    assert loaded.error.loc.line == line_of(tmp_path / "kernels.py", "z[256")


def test_sibling_procs_are_verified_with_the_entry_file(tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text(SIBLING_HEAD +
                                         KERNEL.format(name="lib_k"))
    path = write(tmp_path, "entry.py", "from kernels import lib_k\n" + KERNEL.format(name="k"))
    loaded = load_isolated(path)
    assert loaded.error is None and [p.name for p in loaded.procs] == ["k", "lib_k"]


def test_ctrl_c_while_loading_kills_the_child(tmp_path: Path) -> None:
    """SIGINT to the verifier ends it promptly and takes the loading child with it (LOAD-6)."""
    import signal
    import subprocess

    path = write(tmp_path, "slow.py", """
import time
time.sleep(60)
""")
    cli = start_cli([str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    below: set[int] = set()
    for _ in range(1200):  # the supervisor and the confined process running the file
        below = descendants(cli.pid)
        if len(below) >= 2:
            break
        time.sleep(0.05)
    assert len(below) >= 2, below
    cli.send_signal(signal.SIGINT)
    cli.communicate(timeout=stop_limit_s(10.0))  # stretched by the load per core
    assert cli.returncode != 0
    for pid in below:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_every_stdlib_export_survives_the_reply() -> None:
    """LOAD-9: each value `from verifier.lang import *` gives travels to the parent: frozen
    stdlib objects as the parent's own object, everything else by value; a function or a
    class (upstream's helpers, the namespace's types) is code, never part of a reply (SEC-1)."""
    import io
    import pickle
    import types

    import verifier.lang as lang
    from verifier.load.load_protocol import _ReplyPickler, _ReplyUnpickler

    code = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
    values = {name: getattr(lang, name) for name in lang.__all__
              if not isinstance(getattr(lang, name), code)}
    buf = io.BytesIO()
    _ReplyPickler(buf).dump(values)
    back = _ReplyUnpickler(io.BytesIO(buf.getvalue())).load()
    functions = [getattr(lang, name) for name in lang.__all__
                 if isinstance(getattr(lang, name), types.FunctionType)]
    assert functions
    for function in functions:
        buf = io.BytesIO()
        _ReplyPickler(buf).dump(function)
        with pytest.raises(pickle.UnpicklingError, match="not part of spork-verify's IR"):
            _ReplyUnpickler(io.BytesIO(buf.getvalue())).load()
    for name, value in values.items():
        if getattr(type(value), "__dataclass_params__", None) is not None:
            assert back[name] is value or back[name] == value, name
    instrs = [name for name, v in values.items() if type(v).__name__ == "Instr"]
    assert instrs and all(back[name] is values[name] for name in instrs)


def test_load_output_in_junit_and_json_round_trip(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    """LOAD-8 in the other formats: JUnit `<system-out>` (valid against the XSD), and a saved
    JSON report reads back with the output."""
    import xmlschema

    from verifier.report.json_in import results_from_json

    path = write(tmp_path, "noisy.py", KERNEL.format(name="k") + "\nprint('hello\\x01')\n")
    assert main(["--format", "junit", str(path)]) == 0
    xml = capsys.readouterr().out
    xsd = xmlschema.XMLSchema10(Path(__file__).parent / "data" / "junit-10.xsd")
    xsd.validate(xml)
    assert "<system-out>hello\\x01\n</system-out>" in xml
    assert main(["--format", "json", str(path)]) == 0
    (back,) = results_from_json(capsys.readouterr().out)
    assert back.load_output == "hello\x01\n"


def test_a_value_of_the_users_own_class_in_the_ir_is_refused_not_imported(
        tmp_path: Path) -> None:
    """LOAD-9: the parent unpickles only spork-verify's classes; a foreign class in the reply
    is an internal error naming it, and its module is never imported here."""
    import pickle
    import sys

    from verifier.load.load_protocol import MAGIC, _HEADER

    (tmp_path / "foreign_mod_for_reply.py").write_text("class Foreign:\n    pass\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import foreign_mod_for_reply

        payload = pickle.dumps(LoadReply(Stage.done, (foreign_mod_for_reply.Foreign(),)))  # type: ignore[arg-type]
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("foreign_mod_for_reply", None)
    import hashlib

    with open(tmp_path / "reply", "w+b") as f:
        f.write(_HEADER.pack(MAGIC, len(payload), hashlib.sha256(payload).digest()) + payload)
        f.flush()
        with pytest.raises(pickle.UnpicklingError, match="foreign_mod_for_reply.Foreign"):
            read_reply(f.fileno())
    assert "foreign_mod_for_reply" not in sys.modules


def test_a_memory_built_by_a_call_travels_by_value() -> None:
    """LOAD-9: a memory a call builds (`Sm80_RmemMatrixD(16, 8)`, not bound at module level)
    travels by value, its name (`MemoryName`, TK-1) included: sporkbench's GEMMs hold such
    memories."""
    import io

    from verifier.lang import Sm80_RmemMatrixD
    from verifier.load.load_protocol import _ReplyPickler, _ReplyUnpickler

    memory = Sm80_RmemMatrixD(16, 8)
    buf = io.BytesIO()
    _ReplyPickler(buf).dump(memory)
    back = _ReplyUnpickler(io.BytesIO(buf.getvalue())).load()
    assert back == memory and back.name() == memory.name()
