import atexit
atexit.register(lambda: 1 / 0)
