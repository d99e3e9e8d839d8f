"""Text with a Zipf-like word distribution, mixed case and punctuation.

argv: seed [vocabulary_size [tokens [k]]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    vocab = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    tokens = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    k = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = set()
    while len(words) < vocab:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(1, 9))))
    words = sorted(words)
    rng.shuffle(words)
    # Zipf-like weights so counts are varied but many words tie on small counts
    weights = [1.0 / (i + 1) ** 0.9 for i in range(vocab)]
    seps = [" ", " ", " ", ", ", ". ", "; ", " - ", " (", ") ", "'", "42", "\t", "!? "]
    out = [str(k), "\n"]
    line_len = 0
    for w in rng.choices(words, weights, k=tokens):
        r = rng.random()
        if r < 0.1:
            w = w.capitalize()
        elif r < 0.13:
            w = w.upper()
        out.append(w)
        line_len += 1
        if line_len >= rng.randint(6, 16):
            out.append("\n")
            line_len = 0
        else:
            out.append(rng.choice(seps))
    out.append("\n")
    sys.stdout.write("".join(out))


main()
