import sys
from heapq import heappush, heappop
def main():
    data = sys.stdin.buffer.read().split()
    n, k = int(data[0]), int(data[1])
    a = list(map(int, data[2:2 + n]))
    heap = []
    total = 0
    for j in range(n):
        heappush(heap, (-a[j], j))
        if j >= k - 1:
            while heap[0][1] <= j - k:
                heappop(heap)
            total -= heap[0][0]
    print(total)
main()
