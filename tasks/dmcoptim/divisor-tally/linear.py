import sys
def main():
    data = sys.stdin.buffer.read().split()
    q = int(data[0])
    out = []
    for t in range(q):
        n = int(data[1 + t])
        out.append(sum(n // k for k in range(1, n + 1)))
    print("\n".join(map(str, out)))
main()
