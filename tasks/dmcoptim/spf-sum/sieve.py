import sys
def main():
    n = int(sys.stdin.read())
    spf = [0] * (n + 1)
    for p in range(2, n + 1):
        if spf[p] == 0:
            spf[p] = p
            if p * p <= n:
                for m in range(p * p, n + 1, p):
                    if spf[m] == 0:
                        spf[m] = p
    print(sum(spf))
main()
