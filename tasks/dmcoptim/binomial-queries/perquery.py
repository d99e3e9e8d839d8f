import sys
MOD = 10**9 + 7
def main():
    data = sys.stdin.buffer.read().split()
    q = int(data[0])
    out = []
    for i in range(q):
        n = int(data[1 + 2 * i]); k = int(data[2 + 2 * i])
        if k > n:
            out.append(0); continue
        k = min(k, n - k)
        num = den = 1
        for j in range(k):
            num = num * (n - j) % MOD
            den = den * (j + 1) % MOD
        out.append(num * pow(den, MOD - 2, MOD) % MOD)
    print("\n".join(map(str, out)))
main()
