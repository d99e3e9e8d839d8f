"""Sales CSV with shuffled column order and a handful of regions.

argv: seed [rows [regions]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    nreg = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    rng = random.Random(seed)
    cols = ["id", "date", "region", "product", "qty", "price", "customer", "note"]
    rng.shuffle(cols)
    regions = set()
    while len(regions) < nreg:
        regions.add(rng.choice(["north", "south", "east", "west", "central", "apac", "emea", "latam"]) +
                    rng.choice(["", "-1", "-2", "_x", "-metro", "-rural"]))
    regions = sorted(regions)
    weights = [rng.random() + 0.05 for _ in regions]
    products = ["widget", "gadget", "gizmo", "doohickey", "sprocket", "flange", "bolt-m4", "nut-m4"]
    lines = [",".join(cols)]
    for i in range(rows):
        val = {
            "id": str(100000 + i),
            "date": "2026-%02d-%02d" % (rng.randint(1, 12), rng.randint(1, 28)),
            "region": rng.choices(regions, weights)[0],
            "product": rng.choice(products),
            "qty": str(rng.randint(1, 1000) if rng.random() < 0.9 else rng.randint(1, 9)),
            "price": str(rng.randint(1, 1000000)),
            "customer": "c%06d" % rng.randrange(10**6),
            "note": rng.choice(["", "", "rush", "gift wrap", "returned?", "n/a"]),
        }
        lines.append(",".join(val[c] for c in cols))
    sys.stdout.write("\n".join(lines) + "\n")


main()
