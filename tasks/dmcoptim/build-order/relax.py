import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, m = int(data[0]), int(data[1])
    t = [0] + list(map(int, data[2:2 + n]))
    e = list(map(int, data[2 + n:2 + n + 2 * m]))
    best = t[:]   # best[v] = heaviest chain ending at v
    changed = True
    while changed:
        changed = False
        for i in range(0, 2 * m, 2):
            u, v = e[i], e[i + 1]
            cand = best[u] + t[v]
            if cand > best[v]:
                best[v] = cand; changed = True
    print(max(best[1:]))
main()
