import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    versions = data[1:n + 1]
    # one key per version, computed once: the numeric parts, then the text as tie-break
    versions.sort(key=lambda v: (tuple(map(int, v.split(b"."))), v))
    sys.stdout.buffer.write(b"\n".join(versions) + b"\n")


main()
