import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    pts = sorted(set(zip(map(int, data[1:1 + 2 * n:2]), map(int, data[2:2 + 2 * n:2]))))
    if len(pts) == 1:
        print(0); return
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
    h = lower[:-1] + upper[:-1]
    m = len(h)
    def d2(a, b):
        return (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2
    if m == 2:
        print(d2(h[0], h[1])); return
    best = 0
    j = 1
    for i in range(m):
        a, b = h[i], h[(i + 1) % m]
        # advance j while the triangle area (distance from edge ab) grows
        while True:
            nj = (j + 1) % m
            if cross(a, b, h[nj]) > cross(a, b, h[j]):
                j = nj
            else:
                break
        best = max(best, d2(a, h[j]), d2(b, h[j]))
    print(best)
main()
