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
    inv = [1] * (top + 1)
    inv[top] = pow(fact[top], MOD - 2, MOD)
    for i in range(top, 0, -1):
        inv[i - 1] = inv[i] * i % MOD
    out = []
    for i in range(q):
        n = vals[2 * i]; k = vals[2 * i + 1]
        out.append(fact[n] * inv[k] % MOD * inv[n - k] % MOD if k <= n else 0)
    print("\n".join(map(str, out)))
main()
