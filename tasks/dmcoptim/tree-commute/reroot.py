import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    adj = [[] for _ in range(n + 1)]
    for i in range(n - 1):
        u, v, w = int(data[1 + 3 * i]), int(data[2 + 3 * i]), int(data[3 + 3 * i])
        adj[u].append((v, w)); adj[v].append((u, w))
    parent = [0] * (n + 1); pw = [0] * (n + 1); depth = [0] * (n + 1)
    order = [1]; parent[1] = -1
    for x in order:
        for y, w in adj[x]:
            if y != parent[x]:
                parent[y] = x; pw[y] = w; depth[y] = depth[x] + w
                order.append(y)
    size = [1] * (n + 1)
    for x in reversed(order[1:]):
        size[parent[x]] += size[x]
    down = [0] * (n + 1)
    down[1] = sum(depth[1:])
    for x in order[1:]:
        # moving the root across edge (parent, x): size[x] villages get closer, n - size[x] farther
        down[x] = down[parent[x]] + pw[x] * (n - 2 * size[x])
    print(sum(down[1:]) // 2 % (10**9 + 7))
main()
