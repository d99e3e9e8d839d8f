import sys
from heapq import heappop, heappush


def main():
    data = sys.stdin.buffer.read().split()
    n, m, s = int(data[0]), int(data[1]), int(data[2])
    adj = [[] for _ in range(n + 1)]
    it = iter(map(int, data[3:3 + 3 * m]))
    for u, v, w in zip(it, it, it):
        adj[u].append((v, w))
    dist = [-1] * (n + 1)
    heap = [(0, s)]
    while heap:
        d, u = heappop(heap)
        if dist[u] >= 0:
            continue  # a stale entry: u was settled with a shorter distance
        dist[u] = d
        for v, w in adj[u]:
            if dist[v] < 0:
                heappush(heap, (d + w, v))
    sys.stdout.write("\n".join(map(str, dist[1:])) + "\n")


main()
