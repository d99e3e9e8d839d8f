"""Lines of text with quotes, backslashes, tabs and other control bytes (no carriage
returns or newlines inside a line, since lines are what is being escaped).

argv: seed [lines [max_length]]
"""
import random
import sys


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    maxlen = int(sys.argv[3]) if len(sys.argv) > 3 else 40
    rng = random.Random(seed)
    plain = ["the", "configuration", "value", "of", "parameter", "is", "undefined", "while", "loading",
             "resources", "from", "server", "response", "payload", "timestamp", "user", "session"]
    words = ["path", "C:\\dir\\file", "say \"hi\"", "tab\there", "{\"k\": 1}", "plain", "text", "with",
             "some", "words", "and", "symbols", "<>&'", "x", "bell\x07", "nul?", "\x1b[0m", "del\x7f"]
    lines = []
    for _ in range(n):
        target = rng.randint(0, maxlen)
        parts, size = [], 0
        while size < target:
            r = rng.random()
            w = rng.choice(plain) if r < 0.75 else rng.choice(words) if r < 0.97 else "".join(
                chr(rng.choice([rng.randint(1, 31), rng.randint(32, 126)])) for _ in range(rng.randint(1, 6)))
            w = w.replace("\n", " ").replace("\r", " ")
            parts.append(w)
            size += len(w) + 1
        lines.append(" ".join(parts))
    sys.stdout.write("\n".join(lines) + "\n")


main()
