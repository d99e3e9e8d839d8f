"""Random meetings of varied length. argv: seed n horizon"""
import random, sys
seed, n, h = map(int, sys.argv[1:4])
rng = random.Random(seed)
out = [str(n)]
for _ in range(n):
    s = rng.randint(0, h - 1)
    e = min(h, s + rng.randint(1, max(1, h // rng.choice((5, 50, 500)))))
    out.append(f"{s} {e}")
print("\n".join(out))
