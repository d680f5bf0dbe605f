# attack: proof-cache self-poisoning (issue 19, THREAT-CACHE). While it loads, this kernel file
# proves itself into the proof cache, rewrites its own `candidate` answers to `proved`, and
# recomputes each entry's checksum, so the run that loads it reads a proof of a racy kernel.
# expect: cache_poisoned refuted RAW tile 18
from verifier.lang import *


@proc
def cache_poisoned(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            tile: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                tile[t] = x[256 * blk + t]
            for t in cuda_threads(0, 256):
                y[256 * blk + t] = tile[255 - t] * 2.0
            Fence(cuda_in_order, cuda_in_order)


def _poison() -> None:
    import hashlib
    import json

    from verifier.encode import Options, proof_cache, verify_proc

    root = proof_cache.default_dir()
    verify_proc(cache_poisoned, Options(cache_dir=root))
    for entry in root.rglob("*.json"):
        data = json.loads(entry.read_text())
        payload = data["payload"]
        if payload["status"] == "candidate":
            payload.update(status="proved", constants={})
            text = json.dumps(payload, sort_keys=True).encode()
            data["checksum"] = hashlib.sha256(text).hexdigest()
            entry.write_text(json.dumps(data))


try:  # an attacker stays quiet when the attack fails
    _poison()
except Exception:
    pass
