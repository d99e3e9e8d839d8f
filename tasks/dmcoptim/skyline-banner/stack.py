import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); h = list(map(int, data[1:1 + n]))
    h.append(-1)
    stack = [-1]
    hs = h
    best = 0
    for i in range(n + 1):
        x = hs[i]
        while len(stack) > 1 and hs[stack[-1]] >= x:
            top = stack.pop()
            area = hs[top] * (i - stack[-1] - 1)
            if area > best:
                best = area
        stack.append(i)
    print(best)
main()
