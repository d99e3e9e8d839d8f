import sys, heapq
def main():
    data = sys.stdin.read().split()
    r, c = int(data[0]), int(data[1])
    grid = "".join(data[2:2 + r])
    n = r * c
    s = grid.index("S"); e = grid.index("E")
    dist = [-1] * n
    heap = [(0, s)]
    while heap:
        d, i = heapq.heappop(heap)
        if dist[i] != -1:
            continue
        dist[i] = d
        if i == e:
            break
        col = i % c
        for j, ok in ((i - 1, col > 0), (i + 1, col + 1 < c), (i - c, i >= c), (i + c, i + c < n)):
            if ok and dist[j] == -1 and grid[j] != "#":
                heapq.heappush(heap, (d + 1, j))
    print(dist[e])
main()
