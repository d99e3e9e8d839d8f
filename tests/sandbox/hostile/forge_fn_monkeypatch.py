# attack: monkeypatch what a harness running in the same interpreter would use to compare or report (json, operator, builtins, print)
# kind: function
# task: add
# verdict: wrong_answer|runtime_error
import builtins
import json
import operator
import sys

operator.eq = lambda a, b: True
operator.ne = lambda a, b: False
builtins.isinstance = lambda obj, cls: True
builtins.all = lambda it: True
builtins.any = lambda it: True
_dumps = json.dumps
json.dumps = lambda obj, *a, **k: _dumps(3, *a, **k)   # always the first case's answer
json.JSONEncoder.encode = lambda self, o: "3"
_print = builtins.print
builtins.print = lambda *a, **k: _print(*a, **k)
sys.modules["unittest"] = None  # a harness importing unittest gets an ImportError


def add(a, b):
    return a - b - 1000  # wrong on every case
