import sys
from bisect import bisect_left
def main():
    data = sys.stdin.buffer.read().split()
    n, t = int(data[0]), int(data[1])
    p = [0] * (n + 1)
    for i in range(n):
        p[i + 1] = p[i] + int(data[2 + i])
    keys = sorted((p[i], i) for i in range(n + 1))
    count = 0
    for r in range(1, n + 1):
        want = p[r] - t
        lo = bisect_left(keys, (want, -1))
        hi = bisect_left(keys, (want, r))
        count += hi - lo
    print(count)
main()
