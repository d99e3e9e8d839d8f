import sys


def main():
    lines = sys.stdin.buffer.read().split(b"\n")
    q = int(lines[0])
    # a bytearray grows and shrinks at its end in amortised O(1), a str is copied
    doc = bytearray()
    out = []
    for line in lines[1:q + 1]:
        op = line[0]
        if op == 43:                      # b"+"
            doc += line[2:].strip()
        elif op == 45:                    # b"-"
            k = int(line[2:])
            if k:
                del doc[-k:]
        else:
            i, j = line[2:].split()
            out.append(doc[int(i) - 1:int(j)])
    out.append(b"%d" % len(doc))
    out.append(b"")
    sys.stdout.buffer.write(b"\n".join(out))


main()
