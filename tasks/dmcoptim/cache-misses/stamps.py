import sys
from heapq import heappush, heappop
def main():
    data = sys.stdin.buffer.read().split()
    n, c = int(data[0]), int(data[1])
    last = {}
    heap = []
    misses = 0
    for t, k in enumerate(map(int, data[2:2 + n])):
        if k not in last:
            misses += 1
            if len(last) == c:
                while True:
                    s, old = heappop(heap)
                    if last.get(old) == s:
                        del last[old]
                        break
        last[k] = t
        heappush(heap, (t, k))
    print(misses)
main()
