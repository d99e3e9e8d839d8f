import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); w = list(map(int, data[1:1 + n]))
    p = [0]
    for x in w:
        p.append(p[-1] + x)
    dp = [[0] * n for _ in range(n)]
    for length in range(2, n + 1):
        for i in range(n - length + 1):
            j = i + length - 1
            row = dp[i]
            best = min(row[k] + dp[k + 1][j] for k in range(i, j))
            row[j] = best + p[j + 1] - p[i]
    print(dp[0][n - 1])
main()
