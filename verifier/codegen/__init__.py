"""CUDA code generation for verified procs (language.md §8, semantics.md §8, collectives.md §4).

Reads a proc and the `Certificate` of its proof; produces one self-contained `.cu` file whose
header carries the certificate and a seal over the file; checks such a file back
(`--check-cert`). Imports `verifier.lang`, `verifier.collectives`, `verifier.diagnostics` and
`verifier.results` only. Other packages import only the names below.
"""

from verifier.codegen.certificate import CERT_PREFIX, MARKERS, read_certificate, read_emitted
from verifier.codegen.check import proc_problems, proof_problems
from verifier.codegen.emit import emit_cuda

__all__ = ["CERT_PREFIX", "MARKERS", "emit_cuda", "proc_problems", "proof_problems",
           "read_certificate", "read_emitted"]
