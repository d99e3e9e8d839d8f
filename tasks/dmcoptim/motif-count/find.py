import sys
def main():
    g = sys.stdin.readline().strip(); m = sys.stdin.readline().strip()
    count = 0
    i = g.find(m)
    while i >= 0:
        count += 1
        i = g.find(m, i + 1)
    print(count)
main()
