"""Lines of words separated by runs of spaces and tabs; some lines blank or whitespace only.

argv: seed [lines [max_words]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    maxw = int(sys.argv[3]) if len(sys.argv) > 3 else 12
    rng = random.Random(seed)
    vocab = ["alpha", "beta", "gamma", "delta", "x", "yz", "Hello,", "world!", "42", "-7", "a.b.c",
             "supercalifragilistic", "i", "(paren)", "end."]
    lines = []
    for _ in range(n):
        r = rng.random()
        if r < 0.03:
            lines.append("")
            continue
        if r < 0.05:
            lines.append(rng.choice([" ", "\t", "  \t "]))
            continue
        words = [rng.choice(vocab) if rng.random() < 0.8 else
                 "".join(chr(rng.randint(33, 126)) for _ in range(rng.randint(1, 10)))
                 for _ in range(rng.randint(1, maxw))]
        seps = [rng.choice([" ", " ", " ", "  ", "\t"]) for _ in range(len(words) - 1)]
        text = words[0] + "".join(s + w for s, w in zip(seps, words[1:]))
        if rng.random() < 0.1:
            text = " " + text
        if rng.random() < 0.1:
            text = text + " \t"
        lines.append(text)
    sys.stdout.write("\n".join(lines) + "\n")


main()
