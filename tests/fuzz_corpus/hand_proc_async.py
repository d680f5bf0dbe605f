from verifier.lang import *

@proc
async def k(n: size):
    pass
