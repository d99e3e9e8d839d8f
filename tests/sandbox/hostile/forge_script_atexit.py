# attack: let the asserts fail, hide the traceback (excepthooks) and turn the exit status into 0 from an atexit handler
# kind: script
# task: add
# verdict: wrong_answer|runtime_error
import atexit
import os
import sys
import threading

sys.excepthook = lambda *a: None
threading.excepthook = lambda *a: None
sys.stderr = open(os.devnull, "w")


@atexit.register
def _forge():
    os._exit(0)


def add(a, b):
    return 0
