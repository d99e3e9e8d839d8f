import sys
def main():
    s = sys.stdin.readline().strip()
    n = len(s)
    best = 0
    for i in range(n):
        depth = 0
        for j in range(i, n):
            if s[j] == "(":
                depth += 1
            else:
                depth -= 1
                if depth < 0:
                    break
                if depth == 0 and j - i + 1 > best:
                    best = j - i + 1
    print(best)
main()
