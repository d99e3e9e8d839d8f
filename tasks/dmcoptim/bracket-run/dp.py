import sys
def main():
    s = sys.stdin.readline().strip()
    n = len(s)
    end = [0] * (n + 1)   # end[i + 1] = longest balanced substring ending at index i
    best = 0
    for i in range(1, n):
        if s[i] == ")":
            j = i - end[i] - 1
            if j >= 0 and s[j] == "(":
                v = end[i] + 2 + end[j]
                end[i + 1] = v
                if v > best:
                    best = v
    print(best)
main()
