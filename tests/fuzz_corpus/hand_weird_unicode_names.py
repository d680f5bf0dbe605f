from verifier.lang import *

@proc
def κ(ñ: size):
    pass
