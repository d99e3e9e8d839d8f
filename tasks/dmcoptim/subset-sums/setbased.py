import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    reach = {0}
    for v in map(int, data[1:1 + n]):
        reach |= {s + v for s in reach}
    print(len(reach))
main()
