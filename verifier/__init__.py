"""spork-verify: size-generic verification of Exo-GPU (spork26) kernels."""

__version__ = "0.1.0"
