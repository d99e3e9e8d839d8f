import sys
def main():
    s = sys.stdin.readline().strip()
    t = "^#" + "#".join(s) + "#$"
    m = len(t)
    p = [0] * m
    centre = right = 0
    for i in range(1, m - 1):
        if i < right:
            p[i] = min(right - i, p[2 * centre - i])
        while t[i + p[i] + 1] == t[i - p[i] - 1]:
            p[i] += 1
        if i + p[i] > right:
            centre, right = i, i + p[i]
    # each radius r in the interleaved string gives (r + 1) // 2 palindromes of s
    print(sum((r + 1) // 2 for r in p))
main()
