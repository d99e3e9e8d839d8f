import sys


def main():
    data = sys.stdin.buffer.read().split()
    n = int(data[0])
    # dicts keep insertion order, so the groups come out in order of first appearance
    groups = {}
    for word in data[1:n + 1]:
        key = bytes(sorted(word))
        members = groups.get(key)
        if members is None:
            groups[key] = [word]
        else:
            members.append(word)
    out = [b" ".join(m) for m in groups.values() if len(m) >= 2]
    if out:
        sys.stdout.buffer.write(b"\n".join(out) + b"\n")


main()
