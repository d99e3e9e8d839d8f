import sys
from bisect import bisect_right
from itertools import accumulate
def main():
    data = sys.stdin.buffer.read().split()
    n, b = int(data[0]), int(data[1])
    p = [0] + list(accumulate(map(int, data[2:2 + n])))
    best = 0
    for i in range(n):
        j = bisect_right(p, p[i] + b) - 1
        if j - i > best:
            best = j - i
    print(best)
main()
