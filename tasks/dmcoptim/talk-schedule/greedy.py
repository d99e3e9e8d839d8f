import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    talks = sorted(zip(map(int, data[2:2 + 2 * n:2]), map(int, data[1:1 + 2 * n:2])))
    count = 0; last = -1
    for e, s in talks:
        if s > last:
            count += 1; last = e
    print(count)
main()
