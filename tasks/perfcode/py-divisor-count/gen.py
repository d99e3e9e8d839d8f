"""Numbers that are hard for trial division: primes, semiprimes, squares, smooth numbers.

argv: seed [n [max_value]]
"""
import random
import sys
from math import isqrt


def is_prime(x):
    if x < 2:
        return False
    for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        if x % p == 0:
            return x == p
    d, s = x - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in (2, 3, 5, 7, 11, 13, 17):
        y = pow(a, d, x)
        if y in (1, x - 1):
            continue
        for _ in range(s - 1):
            y = y * y % x
            if y == x - 1:
                break
        else:
            return False
    return True


def random_prime(rng, lo, hi):
    while True:
        x = rng.randint(lo, hi)
        if is_prime(x):
            return x


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    vmax = int(sys.argv[3]) if len(sys.argv) > 3 else 10**9
    rng = random.Random(seed)
    root = isqrt(vmax)
    values = []
    for _ in range(n):
        kind = rng.randrange(6)
        if kind == 0:
            x = random_prime(rng, max(2, vmax // 2), vmax)
        elif kind == 1 and root >= 4:
            p = random_prime(rng, max(2, root // 2), root)
            x = p * random_prime(rng, max(2, root // 2), vmax // p)
        elif kind == 2:
            r = rng.randint(1, root)
            x = r * r
        elif kind == 3:
            x = 1
            while True:
                y = x * rng.choice((2, 2, 3, 3, 5, 7, 11, 13))
                if y > vmax:
                    break
                x = y
        else:
            x = rng.randint(1, vmax)
        values.append(x)
    sys.stdout.write("%d\n%s\n" % (n, "\n".join(map(str, values))))


main()
