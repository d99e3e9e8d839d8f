import string
import sys

LOWER = string.ascii_lowercase.encode()
UPPER = string.ascii_uppercase.encode()


def main():
    # one translation table per distinct shift (at most 26), applied by bytes.translate in C
    tables = {}
    out = []
    for line in sys.stdin.buffer.read().split(b"\n"):
        key, sep, text = line.partition(b" ")
        if not sep and not key:
            continue
        k = int(key) % 26
        table = tables.get(k)
        if table is None:
            table = tables[k] = bytes.maketrans(LOWER + UPPER, LOWER[k:] + LOWER[:k] + UPPER[k:] + UPPER[:k])
        out.append(text.translate(table))
    out.append(b"")
    sys.stdout.buffer.write(b"\n".join(out))


main()
