import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, c = int(data[0]), int(data[1])
    cache = {}
    misses = 0
    for k in data[2:2 + n]:
        if k in cache:
            del cache[k]
        else:
            misses += 1
            if len(cache) == c:
                del cache[next(iter(cache))]
        cache[k] = None
    print(misses)
main()
