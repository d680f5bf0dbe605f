from verifier.lang import *

@proc
def k(n: size):
    try:
        pass
    except Exception:
        pass
