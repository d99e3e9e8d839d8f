"""Points in a disc (round hulls have many vertices) plus random noise. argv: seed n radius"""
import random, sys, math
seed, n, rad = map(int, sys.argv[1:4])
rng = random.Random(seed)
out = [str(n)]
for _ in range(n):
    a = rng.uniform(0, 2 * math.pi)
    r = rad * math.sqrt(rng.random())
    out.append(f"{int(r * math.cos(a))} {int(r * math.sin(a))}")
print("\n".join(out))
