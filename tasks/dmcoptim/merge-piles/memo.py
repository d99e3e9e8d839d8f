import sys
from functools import lru_cache
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); w = list(map(int, data[1:1 + n]))
    p = [0]
    for x in w:
        p.append(p[-1] + x)
    sys.setrecursionlimit(10000)
    @lru_cache(maxsize=None)
    def cost(i, j):
        if i == j:
            return 0
        return min(cost(i, k) + cost(k + 1, j) for k in range(i, j)) + p[j + 1] - p[i]
    print(cost(0, n - 1))
main()
