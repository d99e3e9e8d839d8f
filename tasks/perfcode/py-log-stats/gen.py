"""Access logs: bursts of nearby timestamps, occasional far jumps (month/year/leap-day edges).

argv: seed [lines [services]]
"""
import random
import sys


def civil_from_days(z):
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, d


def fmt(t):
    y, m, d = civil_from_days(t // 86400)
    r = t % 86400
    return "%04d-%02d-%02dT%02d:%02d:%02d" % (y, m, d, r // 3600, r // 60 % 60, r % 60)


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    rng = random.Random(seed)
    lo, hi = 946684800, 4102444799          # 2000-01-01 .. 2099-12-31T23:59:59
    names = set()
    while len(names) < k:
        names.add(rng.choice(["api", "auth", "db", "web", "cache", "queue", "search", "mail"]) +
                  rng.choice(["", "-eu", "-us", "2", "-v3", "-canary"]))
    names = sorted(names)
    t = rng.randint(lo, hi)
    lines = []
    for _ in range(n):
        r = rng.random()
        if r < 0.002:
            t = rng.randint(lo, hi)
        elif r < 0.01:
            t = max(lo, min(hi, t + rng.randint(-86400 * 40, 86400 * 40)))
        else:
            t = max(lo, min(hi, t + rng.randint(-30, 60)))
        status = rng.choice((200, 200, 200, 201, 204, 301, 304, 400, 404, 499, 500, 502, 503, 599))
        latency = int(rng.expovariate(1 / 80.0)) if rng.random() < 0.98 else rng.randint(0, 10**6)
        lines.append("%s %s %d %d" % (fmt(t), rng.choice(names), status, latency))
    sys.stdout.write("\n".join(lines) + "\n")


main()
