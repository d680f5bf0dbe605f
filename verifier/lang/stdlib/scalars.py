"""Element types as Python values (upstream's `exo.scalars`): `f16`, `bf16`, `f32`, ...

Kernel files use them where a type is a Python value: a precision keyword of an instr
(`dst=f16`), `set_precision(p, "x", f16)`, a local alias used in an annotation
(`my_f16 = f16; ... x: my_f16[64]`), and `valid_num_types` of a user-defined instr. The IR
itself names types by string (`ir.SCALAR_TYPES`). LANG-2.4
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i8": 8, "ui8": 8, "ui16": 16, "i32": 32,
         "e4m3": 8}  # e4m3: OCP FP8 (4 exponent, 3 mantissa bits), tcgen05.mma kind::f8f6f4


@dataclass(frozen=True, slots=True)
class ScalarInfo:
    """An element type; `ScalarInfo("f16")`, `ScalarInfo(f16)` and `f16` are equal."""

    name: str

    def __init__(self, name: Any) -> None:
        text = name if isinstance(name, str) else getattr(name, "name", None)
        if text not in _BITS:
            raise ValueError(f"unknown element type {name!r} (one of {', '.join(_BITS)})")
        object.__setattr__(self, "name", text)

    @property
    def bits(self) -> int:
        return _BITS[self.name]

    def __str__(self) -> str:
        return self.name

    @staticmethod
    def same() -> "SameTypes":
        """A `valid_num_types` accepting any tuple of one repeated type."""
        return SameTypes()


@dataclass(frozen=True, slots=True)
class SameTypes:
    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and len({ScalarInfo(k) for k in key}) <= 1


f16 = ScalarInfo("f16")
bf16 = ScalarInfo("bf16")
f32 = ScalarInfo("f32")
f64 = ScalarInfo("f64")
i8 = ScalarInfo("i8")
ui8 = ScalarInfo("ui8")
ui16 = ScalarInfo("ui16")
i32 = ScalarInfo("i32")
e4m3 = ScalarInfo("e4m3")
