"""Printable ASCII text with tabs and newlines (the judge passes stdin as text).

argv: seed [bytes]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    rng = random.Random(seed)
    alphabet = [chr(c) for c in range(0x20, 0x7f)] + ["\n", "\t", "\n", " ", " ", " ", "\x01", "\x7f"]
    out = "".join(rng.choices(alphabet, k=size))
    sys.stdout.write(out)


main()
