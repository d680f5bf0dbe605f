"""The certificate header, read_certificate, and what emit_cuda refuses to lower."""

from __future__ import annotations

from dataclasses import replace

import pytest
from codegen_support import HERE, example, hand_certified, load

from verifier.codegen import CERT_PREFIX, emit_cuda, read_certificate
from verifier.diagnostics import InternalError, RejectedInput, Unsupported

FORGED = HERE / "codegen_forged.py"


def _line_of(text: str) -> int:
    lines = FORGED.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def forged(name: str) -> tuple:
    """A proc of codegen_forged.py with a hand-made certificate for its exact IR."""
    return hand_certified(FORGED, name)


@pytest.mark.rule("LANG-8.1")
def test_certificate_line_round_trips() -> None:
    proc, cert = example("smem_exchange")
    text = emit_cuda(proc, cert)
    lines = [line for line in text.splitlines() if line.startswith(CERT_PREFIX)]
    assert CERT_PREFIX == "// spork-verify-certificate: "
    assert lines == [CERT_PREFIX + cert.to_json()]
    assert f"// spork-verify-certificate-digest: {cert.digest()}" in text
    assert text.index(CERT_PREFIX) < text.index("#include")
    assert read_certificate(text) == cert
    assert cert.obligations  # a real proof discharged obligations


def test_read_certificate_absent_or_damaged() -> None:
    proc, cert = example("saxpy")
    text = emit_cuda(proc, cert)
    assert read_certificate("int main() {}\n") is None
    assert read_certificate(text.replace(CERT_PREFIX + "{", CERT_PREFIX + "{oops")) is None
    tampered = text.replace(cert.ir_hash, "0" * 64)
    assert read_certificate(tampered) is None  # digest line no longer matches



@pytest.mark.rule("LANG-8.1")
@pytest.mark.parametrize("edit", [
    {"obligations": [["id", 7]]}, {"obligations": "x"}, {"solver": None}, {"chain": {}},
    {"extra": "field"}])
def test_certificate_from_json_refuses_wrong_fields(edit: dict) -> None:
    """One parser for every certificate read back; a field of the wrong type is not read."""
    import json

    from verifier.results import Certificate

    _, cert = example("saxpy")
    data = {**json.loads(cert.to_json()), **edit}
    with pytest.raises(ValueError):
        Certificate.from_json(json.dumps(data))
    assert Certificate.from_json(cert.to_json()) == cert

@pytest.mark.rule("LANG-8.1")
def test_refuses_certificate_of_another_proc() -> None:
    proc, _ = example("smem_exchange")
    _, other = example("saxpy")
    with pytest.raises(InternalError, match="certificate is for proc 'saxpy'"):
        emit_cuda(proc, other)


@pytest.mark.rule("LANG-8.1")
def test_refuses_certificate_of_another_ir() -> None:
    proc, cert = example("smem_exchange")
    with pytest.raises(InternalError, match="IR hash"):
        emit_cuda(proc, replace(cert, ir_hash="0" * 64))
    buggy = load(HERE.parent.parent / "examples" / "smem_exchange_bug_nofence.py",
                 "smem_exchange_bug_nofence")
    with pytest.raises(InternalError):
        emit_cuda(buggy, replace(cert, proc=buggy.name))


@pytest.mark.rule("SEM-8.5")
def test_mbarriers_in_clusters_init_cluster_wide() -> None:
    # each CTA initialises its own copy; peers may arrive remotely, so the init is released to
    # the cluster and a cluster barrier separates it from the first use; waits acquire at
    # cluster scope, and no CTA exits while a peer may still touch its mbarriers
    text = emit_cuda(*forged("mbarrier_cluster"))
    assert "// one copy per CTA (CTA-in-cluster axes c < 2)" in text
    init = text.index("mbarrier.init.shared::cta.b64")
    fence = text.index('asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");')
    sync = text.index("barrier.cluster.wait.acquire.aligned;")
    assert init < fence < sync
    assert "exo_mbarrierWaitCluster(" in text and "try_wait.parity.acquire.cluster" in text
    assert "mapa" not in text  # bar[c]: every CTA arrives on its own copy
    main = text.index("exo_deviceMainLoop(exo_smem, exo_deviceArgs);\n")
    assert text.index("barrier.cluster.wait.acquire;", main) < text.index("\n}\n", main)


@pytest.mark.rule("SEM-8.5")
def test_refuses_mbarrier_element_with_changing_collective() -> None:
    # bar[0] is arrived on by warp 0, then by warp 1: a thread's own arrive/await counts are
    # no longer the element's, so per-thread ring state (ArriveIdx, parity bits) cannot be used.
    with pytest.raises(Unsupported, match="Arrives on bar.0. are executed by different thread "
                       "sets") as err:
        emit_cuda(*forged("mbarrier_two_elements"))
    lines = FORGED.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "def mbarrier_two_elements" in line)
    second = [i for i, line in enumerate(lines, 1)
              if i > start and "Arrive(cuda_in_order) >> bar[w]" in line][1]
    assert err.value.loc.line == second


@pytest.mark.rule("COLL-5.6")
def test_refuses_undistributable_registers() -> None:
    # Rejected by COLL-5 (a register tile must be indexed by the thread iterator itself);
    # codegen runs the deduction itself and refuses even with a matching certificate.
    with pytest.raises(RejectedInput, match="Distributed memory deduction for r failed") as err:
        emit_cuda(*forged("reversed_registers"))
    assert err.value.code == "ERR-A23"
    assert err.value.loc.line == _line_of("r: f32[256] @ CudaRmem")


@pytest.mark.rule("SEM-8.3")
def test_cluster_sync_lowering() -> None:
    text = emit_cuda(*forged("cluster_sync"))
    arrive = text.index('asm volatile("barrier.cluster.arrive.aligned;" ::: "memory");')
    wait = text.index('asm volatile("barrier.cluster.wait.aligned;" ::: "memory");')
    assert arrive < wait
    assert "fence.proxy.async" not in text and "cp.async.wait_all" not in text
