import sys
from math import gcd
def main():
    data = sys.stdin.buffer.read().split()
    n, q = int(data[0]), int(data[1])
    size = 1
    while size < n:
        size *= 2
    t = [0] * (2 * size)
    t[size:size + n] = map(int, data[2:2 + n])
    for i in range(size - 1, 0, -1):
        t[i] = gcd(t[2 * i], t[2 * i + 1])
    total = 0
    pos = 2 + n
    for _ in range(q):
        l = int(data[pos]) - 1 + size; r = int(data[pos + 1]) + size; pos += 2
        g = 0
        while l < r:
            if l & 1:
                g = gcd(g, t[l]); l += 1
            if r & 1:
                r -= 1; g = gcd(g, t[r])
            l >>= 1; r >>= 1
        total += g
    print(total)
main()
