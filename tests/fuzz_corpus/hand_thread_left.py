import threading, time
threading.Thread(target=time.sleep, args=(1000,)).start()
