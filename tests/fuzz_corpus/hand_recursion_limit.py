import sys
sys.setrecursionlimit(10**6)
def f(n):
    return 1 + f(n + 1)
f(0)
