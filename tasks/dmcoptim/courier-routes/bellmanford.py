import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    e = list(map(int, data[2:2 + 3 * m]))
    INF = float("inf")
    dist = [INF] * (n + 1)
    dist[1] = 0
    changed = True
    while changed:
        changed = False
        for i in range(0, 3 * m, 3):
            u, v, w = e[i], e[i + 1], e[i + 2]
            du = dist[u]; dv = dist[v]
            if du + w < dv:
                dist[v] = du + w; changed = True
            elif dv + w < du:
                dist[u] = dv + w; changed = True
    print(sum(d for d in dist[1:] if d != INF) % (10**9 + 7))
main()
