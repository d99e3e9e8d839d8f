import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    adj = [[] for _ in range(n + 1)]
    for i in range(m):
        u, v, w = int(data[2 + 3 * i]), int(data[3 + 3 * i]), int(data[4 + 3 * i])
        adj[u].append((v, w)); adj[v].append((u, w))
    INF = float("inf")
    dist = [INF] * (n + 1)
    dist[1] = 0
    done = [False] * (n + 1)
    total = 0
    for _ in range(n):
        best = INF; x = -1
        for i in range(1, n + 1):
            if not done[i] and dist[i] < best:
                best = dist[i]; x = i
        if x < 0:
            break
        done[x] = True
        total += best
        for y, w in adj[x]:
            if best + w < dist[y]:
                dist[y] = best + w
    print(total % (10**9 + 7))
main()
