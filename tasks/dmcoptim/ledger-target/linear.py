import sys
def main():
    data = sys.stdin.buffer.read().split()
    n, t = int(data[0]), int(data[1])
    seen = {0: 1}
    s = 0
    count = 0
    get = seen.get
    for x in map(int, data[2:2 + n]):
        s += x
        count += get(s - t, 0)
        seen[s] = get(s, 0) + 1
    print(count)
main()
