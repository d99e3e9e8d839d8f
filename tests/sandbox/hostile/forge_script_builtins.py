# attack: override builtins the test code relies on (all, any, isinstance, AssertionError, print) and the import machinery
# kind: script
# task: add
# verdict: wrong_answer|runtime_error
import builtins

builtins.all = lambda it: True
builtins.any = lambda it: True
builtins.isinstance = lambda obj, cls: True
builtins.len = lambda obj: 0
builtins.AssertionError = type("AssertionError", (Exception,), {})
builtins.__import__ = (lambda real: (lambda name, *a, **k: real(name, *a, **k)))(builtins.__import__)


def add(a, b):
    return -1
