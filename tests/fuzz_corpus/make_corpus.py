"""Regenerate the hostile-input corpus: `python tests/fuzz_corpus/make_corpus.py`.

Deterministic (seeded): truncations, byte flips and token mutations of small examples, broken
encodings, huge numbers; then what the kernel file itself can do to the reader (issue 19):
coding declarations, line ends and form feeds, control characters and NULs, huge lines, deep
nesting, unusual names, cuts at every tenth of a file, upstream-style imports gone wrong. The
hand-written files (`hand_*.py`) are kept as they are. Every file must end in exit 0..3 with no
traceback (tests/test_fuzz.py, specs/cli.md CLI-6).
"""

from __future__ import annotations

import codecs
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


# ---------------------------------------------------------------- what the file itself does
# (issue 19); each family over a few sources, named gen_<family>_<source>_<variant>.py

INPUT_SOURCES = ["saxpy", "smem_exchange_bug_nofence", "ws_ring"]


def _body(text: str) -> str:
    """The example without its leading comment lines (a declaration must come first)."""
    lines = text.split("\n")
    while lines and lines[0].startswith("#"):
        lines = lines[1:]
    return "\n".join(lines)


def coding_declarations(name: str, text: str) -> dict[str, bytes]:
    body = _body(text)
    variants = {
        "latin1": ("# -*- coding: latin-1 -*-\n# r\xe9sum\xe9 \xa9\n" + body).encode("latin-1"),
        "cp1252": ("# coding=cp1252\n# \u20ac \u2122\n" + body).encode("cp1252"),
        "eucjp": ("# coding: euc-jp\n# \u3042\u3044\u3046\n" + body).encode("euc-jp"),
        "shebang_then_cookie": ("#!/usr/bin/env python3\n# vim: set fileencoding=latin-1 :\n"
                                "# caf\xe9\n" + body).encode("latin-1"),
        "bom_utf8_cookie": codecs.BOM_UTF8 + ("# -*- coding: utf-8 -*-\n" + body).encode(),
        "utf7": ("# coding: utf-7\n" + body).encode("utf-7"),
        "klingon": ("# -*- coding: klingon -*-\n" + body).encode(),
        "rot13": ("# coding: rot13\n" + body).encode(),
        "hex": ("# coding: hex\n" + body).encode(),
        "utf16_cookie": ("# coding: utf-16\n" + body).encode(),
        "bom_latin1_cookie": codecs.BOM_UTF8 + ("# coding: latin-1\n" + body).encode(),
        "cookie_line3_ignored": ("#\n#\n# coding: latin-1\n# caf\xe9\n" + body).encode("latin-1"),
        "cookie_after_code": ("import os\n# coding: latin-1\n# caf\xe9\n" + body).encode("latin-1"),
        "ascii_declared_utf8_used": ("# coding: ascii\n# caf\u00e9\n" + body).encode(),
        "overlong_utf8": ("# x\n" + body).encode().replace(b"# x", b"# \xc0\xaf"),
        "cesu8_surrogates": ("# x\n" + body).encode().replace(b"# x", b"# \xed\xa0\xbd\xed\xb2\xa9"),
        "five_byte_utf8": ("# x\n" + body).encode().replace(b"# x", b"# \xf8\x88\x80\x80\x80"),
        "bom_twice": codecs.BOM_UTF8 * 2 + body.encode(),
        "bom_in_middle": body.replace("\n\n", "\n\ufeff\n", 1).encode(),
        "utf16_be_bom": codecs.BOM_UTF16_BE + body.encode("utf-16-be"),
    }
    return {f"gen_enc_{name}_{k}.py": v for k, v in variants.items()}


def line_ends(name: str, text: str) -> dict[str, bytes]:
    lines = text.split("\n")
    body_at = next(i for i, line in enumerate(lines) if line.startswith("    "))
    variants = {
        "crlf": text.replace("\n", "\r\n"),
        "cr_only": text.replace("\n", "\r"),
        "mixed": "".join(line + ("\r\n", "\r", "\n")[i % 3] for i, line in enumerate(lines)),
        "cr_cr_lf": text.replace("\n", "\r\r\n"),
        "crlf_no_final": text.rstrip("\n").replace("\n", "\r\n"),
        "cr_no_final": text.rstrip("\n").replace("\n", "\r"),
        "form_feed_lines": text.replace("\n\n", "\n\x0c\n"),
        "form_feed_before_decorator": text.replace("\n@proc", "\n\x0c@proc"),
        "form_feed_in_body": "\n".join(lines[:body_at + 1] + ["\x0c"] + lines[body_at + 1:]),
        "form_feed_in_indent": "\n".join(lines[:body_at] + ["  \x0c" + lines[body_at]] +
                                         lines[body_at + 1:]),
        "vertical_tab_line": text.replace("\n\n", "\n\x0b\n", 1),
        "separators_in_comment": text.replace("\n", "\n# \x1c\x1d\x1e\x85\u2028\u2029 end\n", 1),
        "line_separator_in_code": "\n".join(lines[:body_at] + [lines[body_at] + "\u2028"] +
                                            lines[body_at + 1:]),
        "nel_in_code": "\n".join(lines[:body_at] + [lines[body_at] + "\x85"] +
                                 lines[body_at + 1:]),
        "tabs_indent": text.replace("    ", "\t"),
        "tabs_and_spaces": "\n".join(line.replace("    ", "\t", 1) if i % 2 else line
                                     for i, line in enumerate(lines)),
        "trailing_cr_spaces": text.replace("\n", " \r\n"),
        "backslash_cr_continuation": text.replace("assert ", "assert \\\r ", 1),
    }
    return {f"gen_eol_{name}_{k}.py": v.encode() for k, v in variants.items()}


def control_characters(name: str, text: str) -> dict[str, bytes]:
    lines = text.split("\n")
    body_at = next(i for i, line in enumerate(lines) if line.startswith("    "))

    def at_body(extra: str) -> str:
        return "\n".join(lines[:body_at] + [lines[body_at] + extra] + lines[body_at + 1:])

    variants = {
        "esc_comment": text.replace("\n", "\n# \x1b[31mred\x1b[0m \x1b]0;title\x07\n", 1),
        "esc_string": text.replace("\n", "\nBANNER = '\x1b[2J\x1b[H'\n", 1),
        "esc_identifier": at_body("  # ok\nx\x1by = 1"),
        "bidi_comment": text.replace("\n", "\n# \u202e}{ \u2066\u2069\n", 1),
        "bidi_in_code": at_body("\u202e"),
        "zero_width_identifier": at_body("\n    a\u200bb = 1"),
        "del_char": text.replace("\n", "\n# \x7f\x7f\n", 1),
        "backspace_bell": text.replace("\n", "\n# \x08\x08\x07\n", 1),
        "nul_first": "\x00" + text,
        "nul_last": text + "\x00",
        "nul_in_comment": text.replace("\n", "\n# \x00\n", 1),
        "nul_in_string": text.replace("\n", "\nS = 'a\x00b'\n", 1),
        "c1_controls": text.replace("\n", "\n# \x80\x9b\x9f\n", 1),
        "private_use": text.replace("\n", "\n# \ue000\U000f0000\n", 1),
        "noncharacters": text.replace("\n", "\n# \ufffe\uffff\n", 1),
    }
    return {f"gen_ctl_{name}_{k}.py": v.encode("utf-8", "surrogatepass")
            for k, v in variants.items()}


def huge_lines(text: str) -> dict[str, bytes]:
    head = "from verifier.lang import *\n\n"
    kernel = _body(text)
    variants = {
        "comment_128k": "# " + "x" * (128 << 10) + "\n" + text,
        "string_128k": "S = '" + "y" * (128 << 10) + "'\n" + text,
        "identifier_16k": text.replace("xv", "x" + "v" * (16 << 10)),
        "flat_sum_20k": text.replace("a * xv", "a * xv" + " + xv" * 20000),
        "unary_chain_5k": text.replace("a * xv", "a * " + "-" * 5000 + "xv"),
        "many_statements": text + "\n" + "".join(f"_v{i} = {i}\n" for i in range(5000)),
        "many_args": head + "@proc\ndef k(" + ", ".join(f"n{i}: size" for i in range(3000)) +
        "):\n    pass\n",
        "long_assert": text.replace("n % 256 == 0", " and ".join(["n % 256 == 0"] * 3000)),
        "one_line_kernel": kernel.replace("\n    ", "; ").split("\n")[0] + "\n",
        "wide_blank_lines": text.replace("\n\n", "\n" + " " * (128 << 10) + "\n"),
    }
    return {f"gen_long_{k}.py": v.encode() for k, v in variants.items()}


def deep_nesting(text: str) -> dict[str, bytes]:
    head = "from verifier.lang import *\n\n"
    index = "256 * blk + t]"

    def nested_ifs(depth: int) -> str:
        lines = [head + "@proc\ndef k(n: size, x: f32[n] @ DRAM):"]
        for d in range(depth):
            lines.append("    " * (d + 1) + f"if n > {d}:")
        lines.append("    " * (depth + 1) + "x[0] = 1.0")
        return "\n".join(lines) + "\n"

    def nested_loops(depth: int) -> str:
        lines = [head + "@proc\ndef k(n: size, x: f32[n] @ DRAM):"]
        for d in range(depth):
            lines.append("    " * (d + 1) + f"for i{d} in seq(0, 2):")
        lines.append("    " * (depth + 1) + "x[0] = 1.0")
        return "\n".join(lines) + "\n"

    variants = {
        "parens_90": text.replace(index, "(" * 90 + "256 * blk + t" + ")" * 90 + "]"),
        "parens_250": text.replace(index, "(" * 250 + "256 * blk + t" + ")" * 250 + "]"),
        "parens_5000": "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n" + text,
        "lists_150": "x = " + "[" * 150 + "]" * 150 + "\n" + text,
        "dicts_2000": "x = " + "{1:" * 2000 + "1" + "}" * 2000 + "\n" + text,
        "ifs_18": nested_ifs(18),
        "ifs_60": nested_ifs(60),
        "ifs_120": nested_ifs(120),
        "seq_loops_19": nested_loops(19),
        "seq_loops_40": nested_loops(40),
        "subscripts_200": text.replace("x[256 * blk + t]", "x[" * 200 + "t" + "]" * 200, 1),
        "attributes_5000": "import os\nx = os" + ".path" * 5000 + "\n" + text,
        "defs_120": "".join("    " * d + f"def f{d}():\n" for d in range(120)) +
        "    " * 120 + "pass\n" + text,
        "lambdas_300": "f = " + "lambda: " * 300 + "0\n" + text,
        "not_chain_3000": text.replace("n % 256 == 0", "not " * 3000 + "n % 256 != 0"),
        "with_blocks_50": head + "@proc\ndef k(n: size):\n" + "".join(
            "    " * (d + 1) + "with CudaDeviceFunction(blockDim=32):\n" for d in range(50)) +
        "    " * 51 + "pass\n",
    }
    return {f"gen_deep_{k}.py": v.encode() for k, v in variants.items()}


def unusual_names(text: str) -> dict[str, bytes]:
    def renamed(new: str) -> str:
        return text.replace("def saxpy(", f"def {new}(")

    variants = {
        "builtin_print": renamed("print"),
        "builtin_object": renamed("object"),
        "soft_keyword_match": renamed("match"),
        "underscore": renamed("_"),
        "dunder_init": renamed("__init__"),
        "dunder_class": renamed("__class__"),
        "named_proc": renamed("proc"),
        "named_size": renamed("size"),
        "named_f32": renamed("f32"),
        "named_CudaRmem": renamed("CudaRmem"),
        "long_5000": renamed("k" * 5000),
        "greek": renamed("\u03c3\u03b1\u03be\u03c0\u03c5"),
        "cjk": renamed("\u6838\u51fd\u6570"),
        "nfkc_collision": text.replace("xv", "\U0001d465v").replace("a * \U0001d465v",
                                                                      "a * xv"),
        "arg_named_like_proc": text.replace("a: f32", "saxpy: f32").replace("a * xv",
                                                                          "saxpy * xv"),
        "buffer_named_t": text.replace("xv", "t_"),
    }
    out = {f"gen_name_{k}.py": v.encode() for k, v in variants.items()}
    # names of the files themselves: spaces, non-ASCII, dots, a dash (all portable)
    for file in ("gen_name file with spaces.py", "gen_name_\u00fcn\u00efc\u00f8d\u00e9.py",
                 "gen_name_..dots...py", "gen_name_-dash-.py", "gen_name_" + "l" * 200 + ".py"):
        out[file] = text.encode()
    return out


def cuts(name: str, data: bytes) -> dict[str, bytes]:
    """The file cut at every tenth of its length (the end of a file that is still being
    written), and inside a multibyte character."""
    out = {f"gen_cut_{name}_{k}.py": data[:len(data) * k // 10] for k in range(1, 10)}
    if name == "saxpy":
        wide = ("# r\u00e9sum\u00e9 \u20ac\n" + data.decode()).encode()
        out["gen_cut_saxpy_mid_char.py"] = wide[:wide.index("\u20ac".encode()) + 1]
        out["gen_cut_saxpy_half_bom.py"] = codecs.BOM_UTF8[:2] + data
        out["gen_cut_saxpy_cookie.py"] = b"# -*- coding: lat"
        out["gen_cut_saxpy_crlf_half.py"] = data.replace(b"\n", b"\r\n")[:len(data) // 2] + b"\r"
    return out


def imports_gone_wrong(text: str) -> dict[str, bytes]:
    body = _body(text).replace("from verifier.lang import *\n", "")
    variants = {
        "missing_name": "from exo import does_not_exist\n",
        "missing_module": "import exo.platforms.nope\n",
        "missing_platform_star": "from exo.platforms.Sm100 import *\n",
        "exo_attribute_proc": "import exo\nfrom exo import *\n" + body.replace("@proc", "@exo.proc"),
        "proc_aliased": "from exo import proc as kernel\nfrom exo import *\n" +
        body.replace("@proc", "@kernel"),
        "exo_then_verifier": "from exo import *\nfrom verifier.lang import *\n",
        "api_module": "import exo.API as api\nfrom exo import *\n",
        "spork_module": "from exo.spork import *\nfrom exo import *\n",
        "relative": "from . import sibling\nfrom exo import *\n",
        "missing_sibling": "from exo import *\nfrom my_kernel_config import threads\n",
        "exo_shadowed": "exo = None\nfrom exo import *\n",
        "exo_module_none": "import sys\nsys.modules['exo'] = None\nfrom exo import *\n",
        "scheduling_rewrite": "from exo import *\nfrom exo.stdlib.scheduling import *\n" + body +
        "\nsaxpy = divide_loop(saxpy, 'blk', 4, ['bo', 'bi'], perfect=True)\n",
        "import_in_proc": "from exo import *\n" + body.replace(
            "    assert n", "    import exo\n    assert n"),
        "no_import_at_all": body,
        "exo_lang_names": "from exo import *\nfrom exo.libs.memories import DRAM_STATIC\n",
        "future_late": "from exo import *\nfrom __future__ import annotations\n",
    }
    return {f"gen_imp_{k}.py": (v if "def saxpy" in v else v + body).encode()
            for k, v in variants.items()}


def input_corpus() -> dict[str, bytes]:
    """The families of issue 19, over a few examples."""
    corpus: dict[str, bytes] = {}
    for name in INPUT_SOURCES:
        text = (EXAMPLES / f"{name}.py").read_text()
        corpus |= coding_declarations(name, text)
        corpus |= line_ends(name, text)
        corpus |= control_characters(name, text)
    saxpy = (EXAMPLES / "saxpy.py").read_text()
    corpus |= huge_lines(saxpy) | deep_nesting(saxpy) | unusual_names(saxpy)
    corpus |= imports_gone_wrong(saxpy)
    for name in SOURCES:
        corpus |= cuts(name, (EXAMPLES / f"{name}.py").read_bytes())
    return corpus


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
    corpus |= input_corpus()
    for file, data in sorted(corpus.items()):
        (HERE / file).write_bytes(data)
    print(f"{len(corpus)} generated files in {HERE.name}/")


if __name__ == "__main__":
    main()
