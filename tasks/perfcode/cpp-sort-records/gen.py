"""Employees: unique long names, skewed department sizes, many equal salaries.

argv: seed [n [departments]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    ndept = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    rng = random.Random(seed)
    areas = ["engineering", "customer-success", "research", "operations", "finance",
             "marketing", "legal-and-compliance", "infrastructure", "people-team", "sales"]
    suffixes = ["-platform", "-emea", "-americas", "-apac", "-tooling", "-core", "-growth",
                "-enterprise", "-north", "-south"]
    depts = set()
    while len(depts) < ndept:
        d = rng.choice(areas)
        while len(d) < 16:
            d += rng.choice(suffixes)
        depts.add(d)
    depts = sorted(depts)
    weights = [rng.random() ** 2 + 0.01 for _ in depts]
    first = ["ada", "bo", "cyd", "dora", "eli", "fay", "gus", "hal", "ivy", "jo", "kai", "lea"]
    last = ["moss", "vane", "roth", "fitz", "wirt", "black", "abel", "cast", "dela", "eis"]
    names = set()
    lines = [str(n)]
    # salaries come from a small set so that ties on (dept, salary) are common
    salaries = [rng.randint(1, 10**9) for _ in range(max(5, n // 20))]
    while len(names) < n:
        name = "%s.%s.%08d" % (rng.choice(first), rng.choice(last), rng.randrange(10**8))
        if name in names:
            continue
        names.add(name)
        lines.append("%s %s %d" % (name, rng.choices(depts, weights)[0], rng.choice(salaries)))
    sys.stdout.write("\n".join(lines) + "\n")


main()
