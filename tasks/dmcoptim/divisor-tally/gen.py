"""Query values between maxN/2 and maxN. argv: seed q maxN"""
import random, sys
seed, q, m = map(int, sys.argv[1:4])
rng = random.Random(seed)
vals = [rng.randint(max(1, m // 2), m) for _ in range(q)]
print(q)
print("\n".join(map(str, vals)))
