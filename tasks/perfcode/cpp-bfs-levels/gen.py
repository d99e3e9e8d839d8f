"""A graph with a long path-like backbone plus random edges, some duplicates and self-loops,
and a few isolated or separate vertices (unreachable from vertex 1).

argv: seed [n [m]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    m = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    rng = random.Random(seed)
    reach = max(1, n - max(1, n // 50))         # vertices reach+1..n are in another component
    order = list(range(2, reach + 1))
    rng.shuffle(order)
    order = [1] + order
    edges = []
    for i in range(1, len(order)):
        if len(edges) >= m:
            break
        # attach to a recent vertex: deep BFS levels rather than a star
        edges.append((order[i], order[max(0, i - rng.randint(1, 8))]))
    while len(edges) < m:
        r = rng.random()
        if r < 0.02 and edges:
            edges.append(rng.choice(edges))                  # a duplicate
        elif r < 0.03:
            v = rng.randint(1, n)
            edges.append((v, v))                             # a self-loop
        elif r < 0.08 and reach < n:
            edges.append((rng.randint(reach + 1, n), rng.randint(reach + 1, n)))
        else:
            i = rng.randrange(len(order))
            j = max(0, min(len(order) - 1, i + rng.randint(-50, 50)))
            edges.append((order[i], order[j]))
    rng.shuffle(edges)
    lines = ["%d %d" % (n, len(edges))] + ["%d %d" % e for e in edges]
    sys.stdout.write("\n".join(lines) + "\n")


main()
