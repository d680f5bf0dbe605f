"""Early release of shared memory (specs/codegen.md CG-R1..R3): a later allocation takes an
earlier one's storage only where the earlier one's SEM-4.7 free check is proved just before
it; otherwise the layout keeps the storage to the end of the scope. The verdict never moves.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
from functools import cache
from pathlib import Path

import jsonschema
import pytest
from codegen_support import HERE, SM90A_GEMMS, certified, hand_certified, sporkbench_proc
from test_codegen_nvcc import compile_together

from verifier.cli import main
from verifier.codegen import emit_cuda
from verifier.codegen.certificate import read_certificate
from verifier.codegen.check import proof_problems
from verifier.diagnostics import Unsupported
from verifier.encode import Options, verify_proc
from verifier.lang.ir import ir
from verifier.lang.ir.lifetimes import early_releases
from verifier.load.load import load_procs
from verifier.report.json_in import results_from_json
from verifier.results import (Certificate, ObligationStatus, ProcResult, ReleaseResult,
                              Verdict)
from verifier.semantics import run_machine

RELEASES = Options(releases=True)  # codegen's early releases (CG-R2: off unless asked)

KERNELS = HERE / "codegen_release.py"
SCHEMA = HERE.parents[1] / "docs" / "json-schema.json"
GEMMS = HERE / "codegen_sm90a_gemm.py"
# where the split-K GEMMs allocate their staging tile (the ring's early-release point)
C_S = next(f"{k}:{line.index('c_s')+1}" for k, line in
           enumerate(GEMMS.read_text().splitlines(), 1) if "c_s: f32[" in line)


@cache
def _procs() -> dict[str, ir.Proc]:
    return {p.name: p for p in load_procs(KERNELS)}


@cache
def proof(name: str) -> tuple[ir.Proc, ProcResult]:
    p = _procs()[name]
    return p, verify_proc(p, RELEASES)


def offsets(text: str) -> dict[str, int]:
    """Each SMEM variable's byte offset in the emitted kernel."""
    return {m[1]: int(m[2]) for m in re.finditer(
        r"float\* const (\w+) = reinterpret_cast<float\*>\(exo_smem \+ (\d+)\);", text)}


def emitted(name: str) -> str:
    p, r = proof(name)
    assert r.verdict is Verdict.proved and r.certificate is not None
    return emit_cuda(p, r.certificate)


def _own(r: ProcResult) -> None:
    """The verdict's obligations are the proc's own: none is a release, none failed."""
    assert r.verdict is Verdict.proved
    assert not any(o.id.startswith("release:") for o in r.obligations)
    assert all(o.status is ObligationStatus.proved for o in r.obligations)
    assert not r.findings


@pytest.mark.rule("SEM-4.7")
@pytest.mark.rule("LANG-8.3")
def test_fenced_release_is_proved_and_the_storage_reused() -> None:
    _, r = proof("release_fenced")
    _own(r)
    (rel,) = r.releases
    assert rel.id == "x@14:13->21:13" and rel.proved and rel.variable == "x"
    assert (rel.loc.line, rel.loc.col) == (21, 13)  # just before `y: ...`
    assert {o.kind for o in rel.obligations} == {"WAR", "WAW"}
    assert all(o.id.startswith("release:") and o.rule == "SEM-4.7" for o in rel.obligations)
    cert = r.certificate
    assert cert is not None and cert.releases == (("x@14:13->21:13", "proved"),)
    evidence = {i for i, _ in cert.obligations if i.startswith("release:")}
    assert evidence == {o.id for o in rel.obligations}
    text = emitted("release_fenced")
    assert offsets(text) == {"x": 0, "y": 0}
    assert "exo_smemBytes = 1024;" in text
    assert read_certificate(text) == cert


@pytest.mark.rule("SEM-4.7")
@pytest.mark.rule("LANG-8.3")
def test_unfenced_release_falls_back_without_touching_the_verdict() -> None:
    p, r = proof("release_unfenced")
    _own(r)  # the end-of-scope frees are fenced: proved, as before
    (rel,) = r.releases
    assert not rel.proved
    assert rel.reason.startswith("WAR:x@41:31->42:13: WAR HAZARD @ free(x[")
    assert "replayed on the concrete machine" in rel.reason
    assert [o.status for o in rel.obligations][-1] is ObligationStatus.refuted
    assert r.certificate is not None
    assert r.certificate.releases[0][1].startswith("not proved: WAR:x@41:31->42:13")
    assert not any(i.startswith("release:") for i, _ in r.certificate.obligations)
    assert offsets(emitted("release_unfenced")) == {"x": 0, "y": 1024}
    # the machine agrees: no hazard at the end of scope, the release's hazard when asked
    holds, found = run_machine(p, {"nb": 2})
    assert holds and not found
    holds, found = run_machine(p, {"nb": 2}, collect_all=True, releases=True)
    assert [(f.kind, f.variable, f.loc.line) for f in found] == [("WAR", "x", 42)]


@pytest.mark.rule("SEM-4.7")
@pytest.mark.parametrize("name, sizes", [
    ("release_fenced", {"nb": 3}), ("release_unfenced", {"nb": 3}),
    ("hopper_release", {"T": 2}), ("hopper_release_wgmma_in_flight", {"T": 2})])
def test_machine_release_checks_agree_with_the_proof(name: str, sizes: dict[str, int]) -> None:
    """Differential: the machine's release checks at one size find a hazard at exactly the
    releases the proof did not prove, of the obligation's kind, variable and statement."""
    p, r = proof(name)
    holds, found = run_machine(p, sizes, collect_all=True, releases=True)
    assert holds
    failed = {(x.variable, x.loc.line) for x in r.releases if not x.proved}
    assert {(f.variable, f.loc.line) for f in found} == failed
    assert all(f.kind == "WAR" and "free(" in f.message for f in found)


@pytest.mark.rule("SEM-4.7")
@pytest.mark.rule("SEM-8.6")
def test_tma_and_wgmma_tiles_released_for_the_epilogue_tile() -> None:
    _, r = proof("hopper_release")
    _own(r)
    assert [(x.variable, x.proved) for x in r.releases] == [("B_s", True), ("A_s", True)]
    assert offsets(emitted("hopper_release")) == {"A_s": 0, "B_s": 8192, "C_s": 0}


@pytest.mark.rule("SEM-4.7")
@pytest.mark.rule("SEM-8.4")
def test_wgmma_in_flight_at_the_release_point_falls_back() -> None:
    _, r = proof("hopper_release_wgmma_in_flight")
    _own(r)
    assert [(x.variable, x.proved) for x in r.releases] == [("B_s", False), ("A_s", False)]
    for x in r.releases:  # the wgmma read (line 121) is not retired at C_s's allocation
        assert x.reason.startswith(f"WAR:{x.variable}@121:25->125:13: WAR HAZARD")
    assert offsets(emitted("hopper_release_wgmma_in_flight")) == \
        {"A_s": 0, "B_s": 8192, "C_s": 16384}


@pytest.mark.rule("LANG-8.1")
def test_certificate_releases_round_trip_and_are_rechecked() -> None:
    _, r = proof("release_fenced")
    cert = r.certificate
    assert cert is not None and Certificate.from_json(cert.to_json()) == cert
    plain = Certificate(cert.proc, cert.ir_hash, cert.obligations, cert.solver,
                        cert.tool_version)
    assert "releases" not in plain.to_json()  # as before early releases existed
    forged = Certificate(cert.proc, cert.ir_hash, cert.obligations, cert.solver,
                         cert.tool_version, releases=(("x@14:13->21:13", "not proved: x"),))
    assert any("early releases" in m for m in proof_problems(forged, cert, "proved"))


@pytest.mark.rule("LANG-8.3")
def test_over_the_limit_names_the_release_not_proved() -> None:
    proc, cert = hand_certified(GEMMS, "gemm_m128n256_reduce_2x2")
    (a, b) = [x.id for x in early_releases(proc.body)]
    with pytest.raises(Unsupported, match=r"328752 bytes .* the early release of a_s before "
                       rf"\S+codegen_sm90a_gemm.py:{C_S} \(CG-R1\) is not in the certificate"
                       ) as err:
        emit_cuda(proc, cert)
    assert err.value.code == "ERR-L06"
    failed = Certificate(cert.proc, cert.ir_hash, (), cert.solver, cert.tool_version,
                         releases=((a, "proved"), (b, "not proved: WAR:b_s@1:1->2:2: ...")))
    with pytest.raises(Unsupported, match=rf"early release of b_s before \S+:{C_S} \(CG-R1\) "
                       r"is not proved: WAR:b_s"):
        emit_cuda(proc, failed)


@pytest.mark.rule("LANG-8.1")
def test_cli_lists_writes_rechecks_and_certifies_the_releases(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    recheck = ["--recheck", "cvc5"] if importlib.util.find_spec("cvc5") else []
    code = main([str(KERNELS), "--proc", "hopper_release", "--format", "json", "--no-cache",
                 "--smt2", str(tmp_path / "smt"), "--emit-cuda", str(tmp_path / "cu"), *recheck])
    text = capsys.readouterr().out
    doc = json.loads(text)
    jsonschema.Draft7Validator(json.loads(SCHEMA.read_text())).validate(doc)

    def key(xs: tuple[ReleaseResult, ...]) -> list[tuple[object, ...]]:
        return [(x.id, x.variable, x.loc, x.proved, x.reason,
                 [(o.id, o.status, o.query_hash, o.rlimit) for o in x.obligations]) for x in xs]

    # the contract round-trips, and says what the in-process proof says
    assert key(results_from_json(text)[0].releases) == key(proof("hopper_release")[1].releases)
    (r,) = doc["results"]
    assert code == 0 and r["verdict"] == "proved"
    assert [(x["id"], x["proved"]) for x in r["releases"]] == \
        [("B_s@63:13->82:13", True), ("A_s@62:13->82:13", True)]
    assert not any(o["id"].startswith("release:") for o in r["obligations"])
    ids = [o["id"] for x in r["releases"] for o in x["obligations"]]
    written = {f.name for f in (tmp_path / "smt" / "hopper_release").iterdir()}
    assert {re.sub(r"[^A-Za-z0-9._-]", "_", i) + ".smt2" for i in ids} <= written
    if recheck:
        assert all(o["recheck"]["answer"] == "unsat" for x in r["releases"]
                   for o in x["obligations"])
    assert main(["--check-cert", str(tmp_path / "cu" / "hopper_release.cu")]) == 0
    assert "matches" in capsys.readouterr().out
    assert main([str(KERNELS), "--proc", "release_unfenced", "-v"]) == 0  # no CUDA asked for:
    assert "early release" not in capsys.readouterr().out  # no releases solved (CG-R2)
    assert main([str(KERNELS), "--proc", "release_unfenced", "-v",  # text, -v
                 "--emit-cuda", str(tmp_path / "cu2")]) == 0
    out = capsys.readouterr().out
    assert "release_unfenced: PROVED (22 obligations: 22 proved; early releases for codegen: " \
        "0/1 proved;" in out
    assert "  early release x@36:13->42:13 (codegen, not the verdict): not proved: WAR:x@41:31" \
        in out


@cache
def split_k_gemm() -> str:
    """The 2x2-cluster split-K GEMM whose ring and staging tile do not fit together at the
    end of the scope (test_codegen_sm90a_gemm.py's TOO_BIG), with its real certificate."""
    return emit_cuda(*certified(GEMMS, "gemm_m128n256_reduce_2x2"))


@pytest.mark.rule("LANG-8.3")
def test_proved_releases_bring_the_split_k_gemm_under_the_limit() -> None:
    text = split_k_gemm()
    assert offsets(text)["c_s"] == 0  # the staging tile takes the ring's storage
    assert "exo_smemBytes = 197680;" in text  # 192 KiB ring + mbarriers + alignment slack


@pytest.mark.rule("LANG-8.3")
@pytest.mark.rule("SEM-4.7")
@pytest.mark.extended  # .ci/run (issue 20: the default run's time budget)
def test_split_k_gemm_without_the_staging_fence_stays_over_the_limit() -> None:
    """Seeded: the ring's TMA writes are not ordered for every thread of the cluster when c_s
    is allocated. The proc is still proved (its end-of-scope frees are fenced); its releases
    are not, with the machine's replayed WAW, and codegen keeps ERR-L06, naming both."""
    p = load_procs(GEMMS)
    (proc,) = [q for q in p if q.name == "gemm_m128n256_reduce_2x2_nofence"]
    r = verify_proc(proc, RELEASES)
    _own(r)
    assert [(x.variable, x.proved) for x in r.releases] == [("b_s", False), ("a_s", False)]
    for x in r.releases:
        assert re.match(rf"WAW:{x.variable}@\d+:41->{C_S}: WAW HAZARD @ free\({x.variable}\[",
                        x.reason)
        assert x.reason.endswith("(replayed on the concrete machine)")
    assert r.certificate is not None
    with pytest.raises(Unsupported, match=rf"328752 bytes .*early release of a_s before \S+:{C_S} "
                       r"\(CG-R1\) is not proved: WAW:a_s.*early release of b_s") as err:
        emit_cuda(proc, r.certificate)
    assert err.value.code == "ERR-L06"


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")
@pytest.mark.extended  # .ci/run (issue 20: the default run's time budget)
def test_overlapping_layouts_compile_for_sm_90a(tmp_path: Path) -> None:
    texts = {n: emitted(n) for n in ("release_fenced", "hopper_release")}
    compile_together(tmp_path, {**texts, "split_k": split_k_gemm()}, "sm_90a")


SPLIT_K = SM90A_GEMMS / "exocc_Sm90a_m128n256_splitK.py"


@pytest.mark.slow
@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not found")
@pytest.mark.skipif(not SPLIT_K.exists(), reason="no sporkbench checkout (set SPORKBENCH to "
                    "one to compile its split-K GEMM)")
def test_sporkbench_split_k_gemm_fits_and_compiles(tmp_path: Path) -> None:
    p = sporkbench_proc(SPLIT_K, "_m1n1_m128n256_splitK")
    r = verify_proc(p, RELEASES)
    _own(r)
    assert all(x.proved for x in r.releases) and {x.variable for x in r.releases} == \
        {"A_smem", "B_smem"}
    assert r.certificate is not None
    text = emit_cuda(p, r.certificate)
    smem = int(re.search(r"exo_smemBytes = (\d+);", text)[1])  # type: ignore[index]
    assert smem <= 232448 and offsets(text)["C_smem"] == 0
    compile_together(tmp_path, {"split_k": text}, "sm_90a")
