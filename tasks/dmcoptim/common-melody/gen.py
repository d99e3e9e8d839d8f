"""Two random strings over a small alphabet, the second a mutation of the first. argv: seed n sigma"""
import random, sys
seed, n, k = map(int, sys.argv[1:4])
rng = random.Random(seed)
alpha = "abcdefghijklmnopqrstuvwxyz"[:k]
a = [rng.choice(alpha) for _ in range(n)]
b = [c if rng.random() < 0.7 else rng.choice(alpha) for c in a]
rng.shuffle(b[: n // 3])
print("".join(a))
print("".join(b))
