import sys
from itertools import compress
def main():
    n = int(sys.stdin.read())
    alive = bytearray([1]) * (n + 1)
    alive[0] = alive[1] = 0
    total = 0
    p = 2
    while p * p <= n:
        if alive[p]:
            # multiples of p not yet struck have p as smallest prime factor
            struck = alive[p * p::p].count(1)
            total += p * struck
            alive[p * p::p] = bytes(len(range(p * p, n + 1, p)))
        p += 1
    # remaining alive numbers are primes: spf = itself
    total += sum(compress(range(n + 1), alive))
    print(total)
main()
