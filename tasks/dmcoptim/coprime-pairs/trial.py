import sys
def main():
    n = int(sys.stdin.read())
    total = 0
    for b in range(2, n + 1):
        x = b; phi = b; d = 2
        while d * d <= x:
            if x % d == 0:
                while x % d == 0:
                    x //= d
                phi -= phi // d
            d += 1
        if x > 1:
            phi -= phi // x
        total += phi
    print(total)
main()
