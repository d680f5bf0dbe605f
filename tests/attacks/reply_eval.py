# attack: code in the verifier through the load reply (issue 19, SEC-1). This kernel file
# replaces the loading child's reply encoder so that the reply, when the verifier decodes it,
# evaluates an expression in the verifier's process that makes every exit code 0.
# expect: reply_eval refuted RAW tile 17
from verifier.lang import *


@proc
def reply_eval(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            tile: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                tile[t] = x[256 * blk + t]
            for t in cuda_threads(0, 256):
                y[256 * blk + t] = tile[255 - t] * 2.0
            Fence(cuda_in_order, cuda_in_order)


PAYLOAD = ("__import__('verifier.cli').cli.__dict__.__setitem__('exit_code', "
           "lambda results: 0)")


class _Evil:
    def __reduce__(self):  # decoding the reply calls eval(PAYLOAD)
        return (eval, (PAYLOAD,))


def _hook() -> None:
    import dataclasses

    from verifier.load import load_protocol

    original = load_protocol.encode_reply

    def encode_reply(reply):  # type: ignore[no-untyped-def]
        if reply.procs:
            reply = dataclasses.replace(reply, exit_code=_Evil())
        return original(reply)

    load_protocol.encode_reply = encode_reply


try:
    _hook()
except Exception:
    pass
