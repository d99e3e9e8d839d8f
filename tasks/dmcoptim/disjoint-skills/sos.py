import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, b = int(data[0]), int(data[1])
    size = 1 << b
    f = [0] * size
    for x in map(int, data[2:2 + n]):
        f[x] += 1
    cnt = f[:]
    for k in range(b):
        bit = 1 << k
        for m in range(size):
            if m & bit:
                f[m] += f[m ^ bit]
    full = size - 1
    ordered = sum(c * f[full ^ x] for x, c in enumerate(cnt) if c)
    ordered -= cnt[0]
    print(ordered // 2)
main()
