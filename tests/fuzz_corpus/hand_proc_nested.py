from verifier.lang import *

def outer():
    @proc
    def k(n: size):
        pass
    return k
k = outer()
