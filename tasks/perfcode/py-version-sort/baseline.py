from functools import cmp_to_key


def parse(version):
    return [int(part) for part in version.split(".")]


def compare(a, b):
    """Compare two version strings: numerically part by part, then byte-wise."""
    pa, pb = parse(a), parse(b)
    for i in range(min(len(pa), len(pb))):
        if pa[i] != pb[i]:
            return -1 if pa[i] < pb[i] else 1
    if len(pa) != len(pb):
        return -1 if len(pa) < len(pb) else 1
    if a != b:
        return -1 if a < b else 1
    return 0


def main():
    n = int(input())
    versions = [input().strip() for _ in range(n)]
    versions.sort(key=cmp_to_key(compare))
    for v in versions:
        print(v)


main()
