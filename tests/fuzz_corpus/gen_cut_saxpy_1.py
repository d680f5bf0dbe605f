# expect: saxpy proved
# y = a * x + y, one element pe