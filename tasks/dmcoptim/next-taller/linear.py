import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); h = list(map(int, data[1:1 + n]))
    total = 0
    stack = []
    for j in range(n):
        x = h[j]
        while stack and h[stack[-1]] < x:
            total += j - stack.pop()
        stack.append(j)
    print(total)
main()
