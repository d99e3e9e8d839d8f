import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); w = list(map(int, data[1:1 + n]))
    p = [0]
    for x in w:
        p.append(p[-1] + x)
    dp = [[0] * n for _ in range(n)]
    opt = [[i] * n for i in range(n)]
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length - 1
            lo = opt[i][j - 1]; hi = opt[i + 1][j]
            if hi > j - 1:
                hi = j - 1
            row = dp[i]
            best = None; bk = lo
            for k in range(lo, hi + 1):
                v = row[k] + dp[k + 1][j]
                if best is None or v < best:
                    best = v; bk = k
            row[j] = best + p[j + 1] - p[i]
            opt[i][j] = bk
    print(dp[0][n - 1])
main()
