import os
os._exit(4)
