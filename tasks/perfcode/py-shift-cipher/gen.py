"""Lines `k text` of printable ASCII (words, digits, punctuation), long and short.

argv: seed [lines [max_length]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    maxlen = int(sys.argv[3]) if len(sys.argv) > 3 else 60
    rng = random.Random(seed)
    words = ["the", "Quick", "BROWN", "fox", "Zebra", "yak", "hello,", "world!", "42", "x-ray",
             "a", "Z", "(mixed)", "CamelCase", "snake_case", "~tilde", "[brackets]", "end."]
    lines = []
    for _ in range(n):
        k = rng.choice([0, 1, 3, 13, 25, 26, 27, 52, 99, rng.randint(0, 10**9)])
        length = rng.randint(0, maxlen)
        text = []
        size = 0
        while size < length:
            w = rng.choice(words) if rng.random() < 0.8 else "".join(
                chr(rng.randint(33, 126)) for _ in range(rng.randint(1, 8)))
            text.append(w)
            size += len(w) + 1
        lines.append("%d %s" % (k, " ".join(text)))
    sys.stdout.write("\n".join(lines) + "\n")


main()
