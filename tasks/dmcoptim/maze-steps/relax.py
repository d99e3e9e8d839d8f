import sys
def main():
    data = sys.stdin.read().split()
    r, c = int(data[0]), int(data[1])
    grid = "".join(data[2:2 + r])
    n = r * c
    INF = n + 1
    dist = [INF] * n
    s = grid.index("S"); e = grid.index("E")
    dist[s] = 0
    free = [i for i in range(n) if grid[i] != "#"]
    changed = True
    while changed:
        changed = False
        # forward sweep pulls from up/left, backward sweep from down/right
        for order in (free, free[::-1]):
            for i in order:
                d = dist[i]
                best = d
                col = i % c
                if col and dist[i - 1] + 1 < best: best = dist[i - 1] + 1
                if col + 1 < c and dist[i + 1] + 1 < best: best = dist[i + 1] + 1
                if i >= c and dist[i - c] + 1 < best: best = dist[i - c] + 1
                if i + c < n and dist[i + c] + 1 < best: best = dist[i + c] + 1
                if best < d:
                    dist[i] = best
                    changed = True
    print(dist[e] if dist[e] < INF else -1)
main()
