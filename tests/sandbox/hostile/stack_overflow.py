# attack: overflow the C stack: unbounded recursion through a C slot (__getattr__) with the recursion limit lifted
# verdict: runtime_error|memory_limit
# limits: time_s=2 wall_s=3 memory_mb=128
"""Python 3.11 runs Python-to-Python calls without C recursion, so the recursion
goes through getattr(), which re-enters the interpreter from C every level.
The sandbox gives the stack the whole memory limit, so the crash may be
classified as memory_limit as well as runtime_error."""
import sys

sys.setrecursionlimit(10**9)


class Deep:
    def __getattr__(self, name):
        return getattr(self, name)


print(Deep().anything)
