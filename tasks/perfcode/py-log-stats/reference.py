import sys


def days_from_civil(y, m, d):
    """Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's algorithm)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def main():
    stats = {}
    day_cache = {}
    for line in sys.stdin.buffer.read().split(b"\n"):
        fields = line.split()
        if not fields:
            continue
        stamp, service, status, latency = fields
        day = stamp[:10]
        base = day_cache.get(day)
        if base is None:
            base = day_cache[day] = 86400 * days_from_civil(int(day[:4]), int(day[5:7]), int(day[8:10]))
        t = base + int(stamp[11:13]) * 3600 + int(stamp[14:16]) * 60 + int(stamp[17:19])
        latency = int(latency)
        s = stats.get(service)
        if s is None:
            s = stats[service] = [0, 0, 0, 0, t, t]
        s[0] += 1
        if status[0] >= 53:              # first digit >= '5': a 5xx status
            s[1] += 1
        if latency > s[2]:
            s[2] = latency
        s[3] += latency
        if t < s[4]:
            s[4] = t
        elif t > s[5]:
            s[5] = t
    out = []
    for service in sorted(stats):
        count, errors, worst, total, first, last = stats[service]
        out.append(b"%s %d %d %d %d %d\n" % (service, count, errors, worst, total // count, last - first))
    sys.stdout.buffer.write(b"".join(out))


main()
