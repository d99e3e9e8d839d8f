import sys

MOD = 998244353


def main():
    data = sys.stdin.buffer.read().split()
    d = int(data[0])
    # highest coefficient first, for Horner's rule; reduce once up front
    coeffs = [int(c) % MOD for c in data[1:d + 2]][::-1]
    q = int(data[d + 2])
    out = []
    for x in map(int, data[d + 3:d + 3 + q]):
        x %= MOD
        acc = 0
        for c in coeffs:
            acc = (acc * x + c) % MOD
        out.append(acc)
    sys.stdout.write("\n".join(map(str, out)) + "\n")


main()
