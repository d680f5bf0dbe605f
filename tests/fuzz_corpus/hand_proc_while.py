from verifier.lang import *

@proc
def k(n: size):
    while True:
        pass
