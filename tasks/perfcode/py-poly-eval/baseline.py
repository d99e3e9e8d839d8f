MOD = 998244353


def main():
    d = int(input())
    coeffs = list(map(int, input().split()))     # c_0 ... c_d
    q = int(input())
    points = list(map(int, input().split()))
    for x in points:
        total = 0
        for i in range(d + 1):
            total = (total + coeffs[i] * pow(x, i, MOD)) % MOD
        print(total)


main()
