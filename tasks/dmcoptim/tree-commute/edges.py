import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    adj = [[] for _ in range(n + 1)]
    for i in range(n - 1):
        u, v, w = int(data[1 + 3 * i]), int(data[2 + 3 * i]), int(data[3 + 3 * i])
        adj[u].append(v); adj[u].append(w); adj[v].append(u); adj[v].append(w)
    parent = [0] * (n + 1); pw = [0] * (n + 1)
    order = [1]; parent[1] = -1
    for x in order:
        a = adj[x]
        for k in range(0, len(a), 2):
            y = a[k]
            if y != parent[x]:
                parent[y] = x; pw[y] = a[k + 1]
                order.append(y)
    size = [1] * (n + 1)
    total = 0
    for x in reversed(order[1:]):
        s = size[x]
        size[parent[x]] += s
        total += pw[x] * s * (n - s)
    print(total % (10**9 + 7))
main()
