def main():
    n, m, s = map(int, input().split())
    adj = [[] for _ in range(n + 1)]
    for _ in range(m):
        u, v, w = map(int, input().split())
        adj[u].append((v, w))
    INF = float("inf")
    dist = [INF] * (n + 1)
    done = [False] * (n + 1)
    dist[s] = 0
    for _ in range(n):
        # pick the closest unfinished vertex by scanning all of them
        u, best = -1, INF
        for v in range(1, n + 1):
            if not done[v] and dist[v] < best:
                u, best = v, dist[v]
        if u == -1:
            break
        done[u] = True
        for v, w in adj[u]:
            if best + w < dist[v]:
                dist[v] = best + w
    for v in range(1, n + 1):
        print(dist[v] if dist[v] != INF else -1)


main()
