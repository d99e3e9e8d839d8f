import sys
from heapq import heappush, heappop
def main():
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    adj = [[] for _ in range(n + 1)]
    for i in range(m):
        u, v, w = int(data[2 + 3 * i]), int(data[3 + 3 * i]), int(data[4 + 3 * i])
        adj[u].append((v, w)); adj[v].append((u, w))
    dist = [-1] * (n + 1)
    heap = [(0, 1)]
    total = 0
    while heap:
        d, x = heappop(heap)
        if dist[x] >= 0:
            continue
        dist[x] = d
        total += d
        for y, w in adj[x]:
            if dist[y] < 0:
                heappush(heap, (d + w, y))
    print(total % (10**9 + 7))
main()
