import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    starts = sorted(map(int, data[1:1 + 2 * n:2])); ends = sorted(map(int, data[2:2 + 2 * n:2]))
    j = 0; best = 0
    for i, s in enumerate(starts):
        while ends[j] <= s:
            j += 1
        if i + 1 - j > best:
            best = i + 1 - j
    print(best)
main()
