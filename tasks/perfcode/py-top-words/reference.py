import heapq
import re
import sys
from collections import Counter


def main():
    data = sys.stdin.buffer.read()
    nl = data.find(b"\n")
    if nl < 0:
        k, text = int(data), b""
    else:
        k, text = int(data[:nl]), data[nl + 1:]
    # bytes.lower() only folds ASCII, exactly the letters the statement counts
    counts = Counter(re.findall(rb"[a-z]+", text.lower()))
    top = heapq.nsmallest(k, counts.items(), key=lambda p: (-p[1], p[0]))
    sys.stdout.write("".join("%s %d\n" % (w.decode(), c) for w, c in top))


main()
