"""Random values with a slow downward drift (the window maximum often expires). argv: seed n k"""
import random, sys
seed, n, k = map(int, sys.argv[1:4])
rng = random.Random(seed)
a = []
v = 10**9 - 10**6
for _ in range(n):
    v = max(-10**9 + 10**6, v - rng.randint(0, 20000))
    a.append(v + rng.randint(-10**6, 10**6))
print(n, k)
print(" ".join(map(str, a)))
