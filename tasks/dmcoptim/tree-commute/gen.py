"""Random tree with shuffled labels (mix of deep chains and bushy parts). argv: seed n"""
import random, sys
seed, n = map(int, sys.argv[1:3])
rng = random.Random(seed)
perm = list(range(1, n + 1)); rng.shuffle(perm)
out = [str(n)]
for v in range(1, n):
    p = rng.randint(max(0, v - 3), v - 1) if rng.random() < 0.7 else rng.randint(0, v - 1)
    out.append(f"{perm[p]} {perm[v]} {rng.randint(1, 10**9)}")
print("\n".join(out))
