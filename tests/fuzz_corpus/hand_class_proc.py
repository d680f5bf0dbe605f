from verifier.lang import *

@proc
class K:
    def f(self):
        pass
