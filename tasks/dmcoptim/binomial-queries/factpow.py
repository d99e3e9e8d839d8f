import sys
MOD = 10**9 + 7
def main():
    data = sys.stdin.buffer.read().split()
    q = int(data[0])
    vals = list(map(int, data[1:1 + 2 * q]))
    top = max(vals[0::2], default=0)
    fact = [1] * (top + 1)
    for i in range(1, top + 1):
        fact[i] = fact[i - 1] * i % MOD
    out = []
    for i in range(q):
        n = vals[2 * i]; k = vals[2 * i + 1]
        if k > n:
            out.append(0)
        else:
            out.append(fact[n] * pow(fact[k] * fact[n - k] % MOD, MOD - 2, MOD) % MOD)
    print("\n".join(map(str, out)))
main()
