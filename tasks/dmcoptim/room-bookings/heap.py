import sys
from heapq import heappush, heapreplace
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    meetings = sorted(zip(map(int, data[1:1 + 2 * n:2]), map(int, data[2:2 + 2 * n:2])))
    ends = []
    for s, e in meetings:
        if ends and ends[0] <= s:
            heapreplace(ends, e)
        else:
            heappush(ends, e)
    print(len(ends))
main()
