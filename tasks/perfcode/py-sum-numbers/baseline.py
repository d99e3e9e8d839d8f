import sys


def line_sum(line):
    """Scan the line character by character, collecting runs of digits."""
    total = 0
    i = 0
    n = len(line)
    while i < n:
        if line[i].isdigit():
            negative = i > 0 and line[i - 1] == "-"
            digits = ""
            while i < n and line[i].isdigit():
                digits += line[i]
                i += 1
            value = int(digits)
            total += -value if negative else value
        else:
            i += 1
    return total


def main():
    for line in sys.stdin:
        print(line_sum(line.rstrip("\n")))


main()
