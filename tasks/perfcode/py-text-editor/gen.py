"""Edit scripts whose document length hovers around a target.

argv: seed [ops [target_length]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    q = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    target = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    rng = random.Random(seed)
    length = 0
    lines = [str(q)]
    for _ in range(q):
        r = rng.random()
        p_append = 0.6 if length < target else 0.5
        if length == 0 or r < p_append:
            s = "".join(rng.choice("abcdefghij") for _ in range(rng.randint(1, 12)))
            lines.append("+ " + s)
            length += len(s)
        elif r < 0.92:
            k = rng.randint(0, min(length, 16))
            lines.append("- %d" % k)
            length -= k
        else:
            i = rng.randint(1, length)
            j = min(length, i + rng.randint(0, 30))
            lines.append("? %d %d" % (i, j))
    sys.stdout.write("\n".join(lines) + "\n")


main()
