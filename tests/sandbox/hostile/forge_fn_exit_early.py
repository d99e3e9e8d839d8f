# attack: exit with status 0 while the module is imported, before any test calls the function
# kind: function
# task: add
# verdict: wrong_answer|runtime_error
import os

os._exit(0)


def add(a, b):
    return a + b
