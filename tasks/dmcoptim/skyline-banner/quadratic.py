import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); h = list(map(int, data[1:1 + n]))
    best = 0
    for l in range(n):
        low = h[l]
        for r in range(l, n):
            if h[r] < low:
                low = h[r]
            area = low * (r - l + 1)
            if area > best:
                best = area
    print(best)
main()
