from verifier.lang import *

proc = 3
@proc
def k(n: size):
    pass
