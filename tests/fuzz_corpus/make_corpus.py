"""Regenerate the hostile-input corpus: `python tests/fuzz_corpus/make_corpus.py`.

Deterministic (seeded): truncations, byte flips and token mutations of small examples, broken
encodings, huge numbers. The hand-written files (`hand_*.py`) are kept as they are. Every file
must end in exit 0..3 with no traceback (tests/test_fuzz.py, specs/cli.md CLI-6).
"""

from __future__ import annotations

import io
import random
import tokenize
from pathlib import Path

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parent.parent / "examples"
SOURCES = ["saxpy", "smem_exchange", "block_reduce", "ws_ring", "cp_async_stage", "smem_matmul",
           "cp_async_double_buffer"]
HUGE = ["10**12", "2**63", "-2**63", "0", "-1", "10**100", "3", "1.5", "None", "'x'"]
SWAPS = {"+": "-", "-": "*", "*": "/", "/": "%", "%": "+", "<": ">=", "==": "!=",
         "cuda_threads": "cuda_tasks", "cuda_tasks": "seq", "seq": "cuda_threads",
         "Fence": "Arrive", "Arrive": "Await", "Await": "Fence", "CudaRmem": "CudaSmemLinear",
         "CudaSmemLinear": "CudaGmemLinear", "f32": "i8", "size": "index"}


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    return list(tokenize.generate_tokens(io.StringIO(text).readline))


def _replace_token(text: str, tok: tokenize.TokenInfo, new: str) -> str:
    lines = text.splitlines(keepends=True)
    (row, col), (erow, ecol) = tok.start, tok.end
    if row != erow:
        return text
    line = lines[row - 1]
    lines[row - 1] = line[:col] + new + line[ecol:]
    return "".join(lines)


def truncations(name: str, text: str, rng: random.Random) -> dict[str, bytes]:
    cuts = sorted({len(text) // 5, len(text) // 2, 4 * len(text) // 5, rng.randrange(len(text))})
    return {f"gen_trunc_{name}_{i}.py": text[:cut].encode() for i, cut in enumerate(cuts)}


def byte_flips(name: str, data: bytes, rng: random.Random) -> dict[str, bytes]:
    out = {}
    for i in range(4):
        buf = bytearray(data)
        for _ in range(1 + i * 2):
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        out[f"gen_flip_{name}_{i}.py"] = bytes(buf)
    return out


def token_mutations(name: str, text: str, rng: random.Random) -> dict[str, bytes]:
    toks = [t for t in _tokens(text) if t.type in (tokenize.NUMBER, tokenize.NAME, tokenize.OP)]
    numbers = [t for t in toks if t.type == tokenize.NUMBER]
    swappable = [t for t in toks if t.string in SWAPS]
    out = {}
    for i in range(3):
        if numbers:
            tok = rng.choice(numbers)
            out[f"gen_num_{name}_{i}.py"] = _replace_token(text, tok, rng.choice(HUGE)).encode()
        if swappable:
            tok = rng.choice(swappable)
            out[f"gen_swap_{name}_{i}.py"] = _replace_token(text, tok, SWAPS[tok.string]).encode()
    tok = rng.choice(toks)
    out[f"gen_drop_{name}.py"] = _replace_token(text, tok, "").encode()
    return out


def encodings(name: str, text: str) -> dict[str, bytes]:
    return {
        f"gen_utf16_{name}.py": text.encode("utf-16"),
        f"gen_utf32_{name}.py": text.encode("utf-32"),
        f"gen_latin1_{name}.py": ("# r\xe9sum\xe9\n" + text).encode("latin-1"),
        f"gen_badutf8_{name}.py": text.encode().replace(b"\n\n", b"\n\xc3\x28\n", 1),
        f"gen_surrogate_{name}.py": text.encode().replace(b"\n", b"\n# \xed\xa0\x80\n", 1),
        f"gen_nul_{name}.py": text.encode().replace(b"\n", b"\n\x00\n", 1),
        f"gen_bom_{name}.py": b"\xef\xbb\xbf" + text.encode(),
    }


def huge_numbers(text: str) -> dict[str, bytes]:
    variants = {
        "blockdim_huge": text.replace("blockDim=256", "blockDim=10**12"),
        "blockdim_2048": text.replace("blockDim=256", "blockDim=2048"),
        "blockdim_neg": text.replace("blockDim=256", "blockDim=-32"),
        "blockdim_float": text.replace("blockDim=256", "blockDim=256.0"),
        "cluster_huge": text.replace("blockDim=256", "blockDim=256, clusterDim=2**40"),
        "cluster_3": text.replace("blockDim=256", "blockDim=256, clusterDim=3"),
        "threads_huge": text.replace("cuda_threads(0, 256)", "cuda_threads(0, 10**12)"),
        "tasks_huge": text.replace("n / 256", "n / 256 + 10**30"),
        "assert_huge": text.replace("n % 256 == 0", "n % (2**200) == 0"),
        "index_huge": text.replace("256 * blk + t]", "256 * blk + t + 10**40]"),
        "neg_index": text.replace("256 * blk + t]", "256 * blk + t - 10**9]"),
        "mod_zero": text.replace("n % 256 == 0", "n % 0 == 0"),
        "div_zero": text.replace("n / 256", "n / 0"),
    }
    return {f"gen_huge_{k}.py": v.encode() for k, v in variants.items()}


def main() -> None:
    for old in HERE.glob("gen_*.py"):
        old.unlink()
    rng = random.Random(20261124)
    corpus: dict[str, bytes] = {}
    for name in SOURCES:
        text = (EXAMPLES / f"{name}.py").read_text()
        corpus |= truncations(name, text, rng)
        corpus |= byte_flips(name, text.encode(), rng)
        corpus |= token_mutations(name, text, rng)
    corpus |= encodings("saxpy", (EXAMPLES / "saxpy.py").read_text())
    corpus |= huge_numbers((EXAMPLES / "saxpy.py").read_text())
    for file, data in sorted(corpus.items()):
        (HERE / file).write_bytes(data)
    print(f"{len(corpus)} generated files in {HERE.name}/")


if __name__ == "__main__":
    main()
