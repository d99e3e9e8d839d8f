"""Input generator of examples/best-window-mean: argv = seed, n, k."""
import random
import sys

seed, n, k = (int(x) for x in sys.argv[1:4])
rng = random.Random(seed)
values = " ".join(f"{rng.uniform(-1000, 1000):.3f}" for _ in range(n))
sys.stdout.write(f"{n} {k}\n{values}\n")
