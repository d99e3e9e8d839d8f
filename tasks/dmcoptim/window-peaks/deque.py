import sys
from collections import deque
def main():
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    a = list(map(int, data[2:2 + n]))
    dq = deque()
    total = 0
    for j in range(n):
        x = a[j]
        while dq and a[dq[-1]] <= x:
            dq.pop()
        dq.append(j)
        if dq[0] <= j - k:
            dq.popleft()
        if j >= k - 1:
            total += a[dq[0]]
    print(total)
main()
