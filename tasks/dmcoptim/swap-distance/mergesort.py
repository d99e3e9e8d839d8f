import sys
def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0]); a = list(map(int, data[1:1 + n]))
    inv = 0
    width = 1
    while width < n:
        out = []
        for lo in range(0, n, 2 * width):
            left = a[lo:lo + width]; right = a[lo + width:lo + 2 * width]
            if not right or left[-1] <= right[0]:
                out += left; out += right
                continue
            i = j = 0; nl = len(left); nr = len(right)
            while i < nl and j < nr:
                if right[j] < left[i]:
                    out.append(right[j]); j += 1; inv += nl - i
                else:
                    out.append(left[i]); i += 1
            out += left[i:]; out += right[j:]
        a = out
        width *= 2
    print(inv)
main()
