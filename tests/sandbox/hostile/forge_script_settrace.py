# attack: a trace function that jumps over every `assert` line of the test code that follows the candidate
# kind: script
# task: add
# verdict: wrong_answer|runtime_error
"""Works whether the harness appends the test code to this file or runs it
separately: every traced line after this file's last line (or in another
file) that starts with `assert` is skipped."""
import linecache
import os
import sys


def add(a, b):
    return 0


def tracer(frame, event, arg):
    code = frame.f_code
    if event == "line" and (code.co_filename != HERE or frame.f_lineno > END):
        line = linecache.getline(code.co_filename, frame.f_lineno).strip()
        if line.startswith("assert") or (not line and code.co_filename.startswith("<")):
            try:
                frame.f_lineno = frame.f_lineno + 1
            except ValueError:
                os._exit(0)  # the last line: nothing left to jump to
    return tracer


HERE = sys._getframe().f_code.co_filename
END = sys._getframe().f_lineno + 3
sys.settrace(tracer)
sys._getframe().f_trace = tracer
