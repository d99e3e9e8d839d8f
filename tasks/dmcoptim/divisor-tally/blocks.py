import sys
def main():
    data = sys.stdin.buffer.read().split()
    q = int(data[0])
    out = []
    for t in range(q):
        n = int(data[1 + t])
        total = 0; k = 1
        while k <= n:
            v = n // k
            k2 = n // v
            total += v * (k2 - k + 1)
            k = k2 + 1
        out.append(total)
    print("\n".join(map(str, out)))
main()
