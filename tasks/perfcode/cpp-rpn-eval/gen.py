"""Random well-formed postfix expressions: numbers (up to 18 digits) and + - * operators.

argv: seed [lines [max_numbers]]
"""
import random
import sys


def expression(rng, count):
    """Postfix tokens with `count` numbers; operators are emitted as soon as allowed at random."""
    tokens = []
    depth = 0
    pushed = 0
    while pushed < count or depth > 1:
        if pushed < count and (depth < 2 or rng.random() < 0.55):
            r = rng.random()
            if r < 0.6:
                tokens.append(str(rng.randint(0, 999)))
            elif r < 0.9:
                tokens.append(str(rng.randint(0, 10**9 + 7)))
            else:
                tokens.append(str(rng.randint(0, 10**18 - 1)))
            depth += 1
            pushed += 1
        else:
            tokens.append(rng.choice("+-*"))
            depth -= 1
    return tokens


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    maxnum = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    rng = random.Random(seed)
    lines = []
    for _ in range(n):
        toks = expression(rng, rng.randint(1, maxnum))
        sep = " " if rng.random() < 0.9 else "  "
        lines.append(sep.join(toks))
    sys.stdout.write("\n".join(lines) + "\n")


main()
