x = input("type: ")
