# attack: write through a NULL pointer via ctypes (SIGSEGV in the interpreter)
# verdict: runtime_error
# limits: time_s=1 wall_s=2 memory_mb=128
import ctypes

ctypes.memset(ctypes.c_void_p(0), 42, 1)
print("ESCAPED: wrote through NULL", flush=True)
