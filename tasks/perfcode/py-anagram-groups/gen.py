"""Words over a small alphabet, many of them anagrams of each other, some repeated.

argv: seed [words [length]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    length = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    stems = []
    words = []
    for _ in range(n):
        r = rng.random()
        if stems and r < 0.35:
            # an anagram of an earlier stem
            w = list(rng.choice(stems))
            rng.shuffle(w)
            words.append("".join(w))
        elif words and r < 0.40:
            words.append(rng.choice(words))        # an exact repeat
        else:
            k = rng.randint(max(1, length - 2), length + 2)
            w = "".join(rng.choice(letters) for _ in range(k))
            stems.append(w)
            words.append(w)
    sys.stdout.write("%d\n%s\n" % (n, "\n".join(words)))


main()
