import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, c = int(data[0]), int(data[1])
    cache = []
    misses = 0
    for k in map(int, data[2:2 + n]):
        pos = -1
        for i in range(len(cache)):
            if cache[i] == k:
                pos = i
                break
        if pos >= 0:
            del cache[pos]
        else:
            misses += 1
            if len(cache) == c:
                del cache[0]
        cache.append(k)
    print(misses)
main()
