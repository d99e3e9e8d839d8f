import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, t = int(data[0]), int(data[1])
    a = list(map(int, data[2:2 + n]))
    count = 0
    for l in range(n):
        s = 0
        for r in range(l, n):
            s += a[r]
            if s == t:
                count += 1
    print(count)
main()
