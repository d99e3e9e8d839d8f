import sys

# Keep digits, '-' and newlines; every other byte becomes a space.
KEEP = b"0123456789-\n"
TABLE = bytes(c if c in KEEP else 32 for c in range(256))


def main():
    data = sys.stdin.buffer.read().translate(TABLE)
    # a '-' always starts a new token: "3-4" -> "3 -4", "--7" -> " - -7"; a '-' that is
    # not followed by a digit is left alone as the token "-" and skipped below
    data = data.replace(b"-", b" -")
    lines = data.split(b"\n")
    if lines[-1] == b"":                    # the text after the final newline
        lines.pop()
    not_dash = b"-".__ne__
    out = [sum(map(int, filter(not_dash, line.split()))) for line in lines]
    sys.stdout.write("\n".join(map(str, out)) + ("\n" if out else ""))


main()
