from verifier.lang import *

size = None
@proc
def k(n: size):
    pass
