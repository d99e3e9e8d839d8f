import sys
def main():
    data = sys.stdin.read().split()
    r, c = int(data[0]), int(data[1])
    w = c + 2
    # pad with a wall border so neighbours never leave the array
    cells = "#" * w + "".join("#" + row + "#" for row in data[2:2 + r]) + "#" * w
    s = cells.index("S"); e = cells.index("E")
    seen = bytearray(1 if ch == "#" else 0 for ch in cells)
    seen[s] = 1
    frontier = [s]
    steps = 0
    while frontier:
        if seen[e]:
            break
        steps += 1
        nxt = []
        for i in frontier:
            for j in (i - 1, i + 1, i - w, i + w):
                if not seen[j]:
                    seen[j] = 1
                    nxt.append(j)
        frontier = nxt
    print(steps if seen[e] else -1)
main()
