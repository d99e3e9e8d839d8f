import sys
from math import isqrt


def primes_upto(limit):
    sieve = bytearray([1]) * (limit + 1)
    sieve[0:2] = b"\x00\x00"
    for i in range(2, isqrt(limit) + 1):
        if sieve[i]:
            sieve[i * i::i] = bytes(len(range(i * i, limit + 1, i)))
    return [i for i, flag in enumerate(sieve) if flag]


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    values = list(map(int, data[1:1 + n]))
    primes = primes_upto(isqrt(max(values, default=1)) + 1)
    out = []
    for a in values:
        # d(a) is the product of (exponent + 1) over the prime factorisation
        result = 1
        for p in primes:
            if p * p > a:
                break
            if a % p == 0:
                e = 1
                a //= p
                while a % p == 0:
                    a //= p
                    e += 1
                result *= e + 1
        if a > 1:
            result *= 2
        out.append(result)
    sys.stdout.write("".join("%d\n" % r for r in out))


main()
