import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    t = [0] + list(map(int, data[2:2 + n]))
    succ = [[] for _ in range(n + 1)]
    indeg = [0] * (n + 1)
    e = data[2 + n:2 + n + 2 * m]
    for i in range(0, 2 * m, 2):
        u, v = int(e[i]), int(e[i + 1])
        succ[u].append(v); indeg[v] += 1
    best = t[:]
    queue = [v for v in range(1, n + 1) if indeg[v] == 0]
    for u in queue:
        bu = best[u]
        for v in succ[u]:
            if bu + t[v] > best[v]:
                best[v] = bu + t[v]
            indeg[v] -= 1
            if indeg[v] == 0:
                queue.append(v)
    print(max(best[1:]))
main()
