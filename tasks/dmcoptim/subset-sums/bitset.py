import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    bits = 1
    for v in map(int, data[1:1 + n]):
        bits |= bits << v
    print(bin(bits).count("1"))
main()
