# attack: sys.exit(0) in the candidate's code, before the test code's asserts run
# kind: script
# task: add
# verdict: wrong_answer|runtime_error
import sys


def add(a, b):
    return 0


sys.exit(0)
