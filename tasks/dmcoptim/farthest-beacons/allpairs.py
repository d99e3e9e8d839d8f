import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    xs = list(map(int, data[1:1 + 2 * n:2])); ys = list(map(int, data[2:2 + 2 * n:2]))
    best = 0
    for i in range(n):
        x, y = xs[i], ys[i]
        for j in range(i + 1, n):
            dx = xs[j] - x; dy = ys[j] - y
            d = dx * dx + dy * dy
            if d > best:
                best = d
    print(best)
main()
