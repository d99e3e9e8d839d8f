import sys
from math import gcd
def main():
    data = sys.stdin.buffer.read().split()
    n, q = int(data[0]), int(data[1])
    a = list(map(int, data[2:2 + n]))
    total = 0
    pos = 2 + n
    for _ in range(q):
        l = int(data[pos]) - 1; r = int(data[pos + 1]); pos += 2
        g = 0
        for i in range(l, r):
            g = gcd(g, a[i])
            if g == 1:
                break
        total += g
    print(total)
main()
