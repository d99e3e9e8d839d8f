import sys
def main():
    n = int(sys.stdin.read())
    total = 0
    for x in range(2, n + 1):
        if x % 2 == 0:
            total += 2
            continue
        d = 3
        while d * d <= x:
            if x % d == 0:
                break
            d += 2
        else:
            d = x
        total += d
    print(total)
main()
