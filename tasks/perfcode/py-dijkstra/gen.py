"""Sparse directed graphs: a random spanning arborescence from a hub plus noise edges.

argv: seed [n [m [max_weight [unreachable_fraction]]]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    m = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    wmax = int(sys.argv[4]) if len(sys.argv) > 4 else 100
    cut = float(sys.argv[5]) if len(sys.argv) > 5 else 0.05
    rng = random.Random(seed)
    s = rng.randint(1, n)
    order = list(range(1, n + 1))
    rng.shuffle(order)
    order.remove(s)
    reach = [s] + order[:int(len(order) * (1 - cut))]   # the rest stays unreachable from s
    edges = []
    for i in range(1, len(reach)):
        if len(edges) >= m:
            break
        edges.append((reach[rng.randrange(max(0, i - 50), i)], reach[i], rng.randint(1, wmax)))
    cutoff = set(order[int(len(order) * (1 - cut)):])
    cut_list = sorted(cutoff)
    while len(edges) < m:
        v = rng.randint(1, n)
        # an edge into the cut-off part must start there too, or it would become reachable
        u = rng.choice(cut_list) if v in cutoff else rng.randint(1, n)
        edges.append((u, v, rng.randint(1, wmax)))
    rng.shuffle(edges)
    lines = ["%d %d %d" % (n, len(edges), s)]
    lines += ["%d %d %d" % e for e in edges]
    sys.stdout.write("\n".join(lines) + "\n")


main()
