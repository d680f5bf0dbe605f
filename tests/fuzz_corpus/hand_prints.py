for i in range(10000):
    print("noise", i)
import sys
print("x" * 100000, file=sys.stderr)
