@proc
def k(n: size):
    pass
