"""Sibling config module, imported by name as sporkbench's Sm80_gemm_pre_config is."""
from dataclasses import dataclass


@dataclass(slots=True)
class ExchangeConfig:
    threads: int = 256
    elem: str = "f32"

    def make_proc_name(self, sync_name: str) -> str:
        return f"exchange_{sync_name}_t{self.threads}"


config = ExchangeConfig()
