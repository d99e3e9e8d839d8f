import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    adj = [[] for _ in range(n + 1)]
    for i in range(n - 1):
        u, v, w = int(data[1 + 3 * i]), int(data[2 + 3 * i]), int(data[3 + 3 * i])
        adj[u].append((v, w)); adj[v].append((u, w))
    total = 0
    for src in range(1, n + 1):
        dist = [-1] * (n + 1)
        dist[src] = 0
        stack = [src]
        while stack:
            x = stack.pop()
            dx = dist[x]
            for y, w in adj[x]:
                if dist[y] < 0:
                    dist[y] = dx + w
                    total += dx + w
                    stack.append(y)
    print(total // 2 % (10**9 + 7))
main()
