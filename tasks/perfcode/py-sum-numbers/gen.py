"""Lines of prose, codes and numbers: signs, dashes, runs of minus signs, leading zeros.

argv: seed [lines [max_length]]
"""
import random
import sys


def token(rng):
    r = rng.random()
    if r < 0.75:
        return rng.choice(["order", "identifier", "quantity", "total:", "x", "to", "from", "and", "Item",
                           "(", ")", ";", "shipment", "warehouse", "customer", "delivered", "pending"])
    if r < 0.85:
        return str(rng.randint(0, 10**rng.randint(1, 12)))
    if r < 0.89:
        return "-" + str(rng.randint(0, 99999))
    if r < 0.91:
        return "%d-%d-%d" % (rng.randint(1990, 2030), rng.randint(1, 12), rng.randint(1, 28))
    if r < 0.93:
        return "v%d.%d" % (rng.randint(0, 9), rng.randint(0, 99))
    if r < 0.95:
        return "--" + str(rng.randint(0, 500))
    if r < 0.97:
        return "0" * rng.randint(1, 3) + str(rng.randint(0, 999))
    return "ab%dcd%de" % (rng.randint(0, 99), rng.randint(0, 99))


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    maxlen = int(sys.argv[3]) if len(sys.argv) > 3 else 80
    rng = random.Random(seed)
    lines = []
    for _ in range(n):
        target = rng.randint(0, maxlen)
        parts = []
        size = 0
        while size < target:
            t = token(rng)
            parts.append(t)
            size += len(t) + 1
        sep = rng.choice([" ", " ", ",", ", ", "\t"])
        lines.append(sep.join(parts))
    sys.stdout.write("\n".join(lines) + "\n")


main()
