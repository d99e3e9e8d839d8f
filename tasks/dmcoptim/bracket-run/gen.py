"""Random brackets with a slight bias to '(' (long near-balanced runs). argv: seed n percent_open"""
import random, sys
seed, n, p = map(int, sys.argv[1:4])
rng = random.Random(seed)
print("".join("(" if rng.randrange(100) < p else ")" for _ in range(n)))
