import sys
def main():
    n = int(sys.stdin.read())
    # C(m) = #{(a, b): 1 <= a, b <= m, gcd = 1} satisfies sum_{k>=1} C(m // k) = m^2
    memo = {}
    def c(m):
        if m in memo:
            return memo[m]
        res = m * m
        k = 2
        while k <= m:
            q = m // k
            k2 = m // q
            res -= (k2 - k + 1) * c(q)
            k = k2 + 1
        memo[m] = res
        return res
    sys.setrecursionlimit(10000)
    # ordered pairs with gcd 1 include (1, 1); unordered a < b pairs: (C - 1) / 2
    print((c(n) - 1) // 2)
main()
