import sys
def hull(points):
    pts = sorted(set(points))
    if len(pts) <= 2:
        return pts
    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    lower = []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper = []
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    pts = list(zip(map(int, data[1:1 + 2 * n:2]), map(int, data[2:2 + 2 * n:2])))
    h = hull(pts)
    best = 0
    for i in range(len(h)):
        x, y = h[i]
        for j in range(i + 1, len(h)):
            d = (h[j][0] - x) ** 2 + (h[j][1] - y) ** 2
            if d > best:
                best = d
    print(best)
main()
