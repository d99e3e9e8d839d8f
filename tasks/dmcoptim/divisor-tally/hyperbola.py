import sys
from math import isqrt
def main():
    data = sys.stdin.buffer.read().split()
    q = int(data[0])
    out = []
    for t in range(q):
        n = int(data[1 + t])
        s = isqrt(n)
        out.append(2 * sum(n // k for k in range(1, s + 1)) - s * s)
    print("\n".join(map(str, out)))
main()
