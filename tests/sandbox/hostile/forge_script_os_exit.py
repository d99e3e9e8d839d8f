# attack: os._exit(0) in the candidate's code (no cleanup, no exception), before the asserts
# kind: script
# task: add
# verdict: wrong_answer|runtime_error
import os


def add(a, b):
    return 0


os._exit(0)
