import sys
from bisect import bisect_right
def main():
    data = sys.stdin.buffer.read().split()
    n, s = int(data[0]), int(data[1])
    p = sorted(map(int, data[2:2 + n]))
    count = 0
    for i in range(n):
        # partners j > i with p[j] <= s - p[i]
        k = bisect_right(p, s - p[i], i + 1)
        count += k - i - 1
    print(count)
main()
