"""Correct solutions (written for codegym's tests) to 25 problems of the DeepSeek-Coder
LeetCode contest set, each with a wrong variant the tests must reject.

Keys are task names (``leetcode-contest/<name>``); values ``(right, wrong)`` are whole
``main.py`` files written as a model answers LeetCode: typing names (``List``,
``Optional``) and ``Counter`` / ``math`` used without importing them, as DeepSeek's
harness provides them (its IMPORT_HELPER block runs first).
"""

SOLUTIONS: dict[str, tuple[str, str]] = {}


def _add(name: str, right: str, wrong: str) -> None:
    SOLUTIONS[name] = (right.strip("\n") + "\n", wrong.strip("\n") + "\n")


_add("weekly-contest-381-minimum-number-of-pushes-to-type-word-i", """
class Solution:
    def minimumPushes(self, word: str) -> int:
        counts = sorted(Counter(word).values(), reverse=True)
        return sum(c * (i // 8 + 1) for i, c in enumerate(counts))
""", """
class Solution:
    def minimumPushes(self, word: str) -> int:
        counts = sorted(Counter(word).values(), reverse=True)
        return sum(c * (i // 9 + 1) for i, c in enumerate(counts))
""")

_add("weekly-contest-353-find-the-maximum-achievable-number", """
class Solution:
    def theMaximumAchievableX(self, num: int, t: int) -> int:
        return num + 2 * t
""", """
class Solution:
    def theMaximumAchievableX(self, num: int, t: int) -> int:
        return num + t
""")

_add("weekly-contest-354-sum-of-squares-of-special-elements", """
class Solution:
    def sumOfSquares(self, nums: List[int]) -> int:
        n = len(nums)
        return sum(nums[i - 1] ** 2 for i in range(1, n + 1) if n % i == 0)
""", """
class Solution:
    def sumOfSquares(self, nums: List[int]) -> int:
        n = len(nums)
        return sum(nums[i - 1] ** 2 for i in range(1, n) if n % i == 0)
""")

_add("weekly-contest-355-split-strings-by-separator", """
class Solution:
    def splitWordsBySeparator(self, words: List[str], separator: str) -> List[str]:
        return [part for w in words for part in w.split(separator) if part]
""", """
class Solution:
    def splitWordsBySeparator(self, words: List[str], separator: str) -> List[str]:
        return [part for w in words for part in w.split(separator)]
""")

_add("weekly-contest-357-faulty-keyboard", """
class Solution:
    def finalString(self, s: str) -> str:
        out = []
        for c in s:
            if c == "i":
                out.reverse()
            else:
                out.append(c)
        return "".join(out)
""", """
class Solution:
    def finalString(self, s: str) -> str:
        out = []
        for c in s:
            if c == "i":
                out.reverse()
            out.append(c)
        return "".join(out)
""")

_add("weekly-contest-364-maximum-odd-binary-number", """
class Solution:
    def maximumOddBinaryNumber(self, s: str) -> str:
        ones = s.count("1")
        return "1" * (ones - 1) + "0" * (len(s) - ones) + "1"
""", """
class Solution:
    def maximumOddBinaryNumber(self, s: str) -> str:
        ones = s.count("1")
        return "1" * ones + "0" * (len(s) - ones)
""")

_add("weekly-contest-369-find-the-k-or-of-an-array", """
class Solution:
    def findKOr(self, nums: List[int], k: int) -> int:
        return sum(1 << b for b in range(31) if sum((x >> b) & 1 for x in nums) >= k)
""", """
class Solution:
    def findKOr(self, nums: List[int], k: int) -> int:
        return sum(1 << b for b in range(31) if sum((x >> b) & 1 for x in nums) > k)
""")

_add("weekly-contest-379-maximum-area-of-longest-diagonal-rectangle", """
class Solution:
    def areaOfMaxDiagonal(self, dimensions: List[List[int]]) -> int:
        a, b = max(dimensions, key=lambda d: (d[0] * d[0] + d[1] * d[1], d[0] * d[1]))
        return a * b
""", """
class Solution:
    def areaOfMaxDiagonal(self, dimensions: List[List[int]]) -> int:
        return max(a * b for a, b in dimensions)
""")

_add("biweekly-contest-117-distribute-candies-among-children-i", """
class Solution:
    def distributeCandies(self, n: int, limit: int) -> int:
        return sum(1 for a in range(limit + 1) for b in range(limit + 1) if 0 <= n - a - b <= limit)
""", """
class Solution:
    def distributeCandies(self, n: int, limit: int) -> int:
        return sum(1 for a in range(limit) for b in range(limit) if 0 <= n - a - b < limit)
""")

_add("weekly-contest-374-find-the-peaks", """
class Solution:
    def findPeaks(self, mountain: List[int]) -> List[int]:
        m = mountain
        return [i for i in range(1, len(m) - 1) if m[i] > m[i - 1] and m[i] > m[i + 1]]
""", """
class Solution:
    def findPeaks(self, mountain: List[int]) -> List[int]:
        m = mountain
        return [i for i in range(1, len(m) - 1) if m[i] >= m[i - 1] and m[i] >= m[i + 1]]
""")

_add("weekly-contest-376-find-missing-and-repeated-values", """
class Solution:
    def findMissingAndRepeatedValues(self, grid: List[List[int]]) -> List[int]:
        n2 = len(grid) ** 2
        seen = Counter(x for row in grid for x in row)
        repeated = next(x for x, c in seen.items() if c == 2)
        missing = next(x for x in range(1, n2 + 1) if x not in seen)
        return [repeated, missing]
""", """
class Solution:
    def findMissingAndRepeatedValues(self, grid: List[List[int]]) -> List[int]:
        n2 = len(grid) ** 2
        seen = Counter(x for row in grid for x in row)
        repeated = next(x for x, c in seen.items() if c == 2)
        missing = next(x for x in range(1, n2 + 1) if x not in seen)
        return [missing, repeated]
""")

_add("biweekly-contest-109-sort-vowels-in-a-string", """
class Solution:
    def sortVowels(self, s: str) -> str:
        vowels = iter(sorted(c for c in s if c in "aeiouAEIOU"))
        return "".join(next(vowels) if c in "aeiouAEIOU" else c for c in s)
""", """
class Solution:
    def sortVowels(self, s: str) -> str:
        vowels = iter(sorted((c for c in s if c in "aeiouAEIOU"), key=str.lower))
        return "".join(next(vowels) if c in "aeiouAEIOU" else c for c in s)
""")

_add("weekly-contest-352-prime-pairs-with-target-sum", """
class Solution:
    def findPrimePairs(self, n: int) -> List[List[int]]:
        sieve = bytearray([1]) * (n + 1)
        sieve[0:2] = b"\\x00\\x00"[: min(2, n + 1)]
        for p in range(2, int(n ** 0.5) + 1):
            if sieve[p]:
                sieve[p * p::p] = bytearray(len(range(p * p, n + 1, p)))
        return [[x, n - x] for x in range(2, n // 2 + 1) if sieve[x] and sieve[n - x]]
""", """
class Solution:
    def findPrimePairs(self, n: int) -> List[List[int]]:
        sieve = bytearray([1]) * (n + 1)
        sieve[0:2] = b"\\x00\\x00"[: min(2, n + 1)]
        for p in range(2, int(n ** 0.5) + 1):
            if sieve[p]:
                sieve[p * p::p] = bytearray(len(range(p * p, n + 1, p)))
        return [[x, n - x] for x in range(2, n // 2) if sieve[x] and sieve[n - x]]
""")

_add("weekly-contest-356-count-complete-subarrays-in-an-array", """
class Solution:
    def countCompleteSubarrays(self, nums: List[int]) -> int:
        k = len(set(nums))
        cnt, left, res = Counter(), 0, 0
        for x in nums:
            cnt[x] += 1
            while len(cnt) == k:
                y = nums[left]
                cnt[y] -= 1
                if cnt[y] == 0:
                    del cnt[y]
                left += 1
            res += left
        return res
""", """
class Solution:
    def countCompleteSubarrays(self, nums: List[int]) -> int:
        k = len(set(nums))
        cnt, left, res = Counter(), 0, 0
        for right, x in enumerate(nums):
            cnt[x] += 1
            while len(cnt) > k:
                y = nums[left]
                cnt[y] -= 1
                if cnt[y] == 0:
                    del cnt[y]
                left += 1
            res += right - left + 1
        return res
""")

_add("weekly-contest-359-determine-the-minimum-sum-of-a-k-avoiding-array", """
class Solution:
    def minimumSum(self, n: int, k: int) -> int:
        taken, x = set(), 1
        while len(taken) < n:
            if k - x not in taken:
                taken.add(x)
            x += 1
        return sum(taken)
""", """
class Solution:
    def minimumSum(self, n: int, k: int) -> int:
        return n * (n + 1) // 2
""")

_add("weekly-contest-365-maximum-value-of-an-ordered-triplet-ii", """
class Solution:
    def maximumTripletValue(self, nums: List[int]) -> int:
        res = best = diff = 0
        for x in nums:
            res = max(res, diff * x)
            diff = max(diff, best - x)
            best = max(best, x)
        return res
""", """
class Solution:
    def maximumTripletValue(self, nums: List[int]) -> int:
        n = len(nums)
        return max((nums[i] - nums[j]) * nums[k]
                   for i in range(n) for j in range(i + 1, n) for k in range(j + 1, n))
""")

_add("weekly-contest-372-separate-black-and-white-balls", """
class Solution:
    def minimumSteps(self, s: str) -> int:
        ones = steps = 0
        for c in s:
            if c == "1":
                ones += 1
            else:
                steps += ones
        return steps
""", """
class Solution:
    def minimumSteps(self, s: str) -> int:
        ones = steps = 0
        for c in s:
            if c == "1":
                ones += 1
                steps += 1
        return steps - ones
""")

_add("weekly-contest-376-divide-array-into-arrays-with-max-difference", """
class Solution:
    def divideArray(self, nums: List[int], k: int) -> List[List[int]]:
        nums = sorted(nums)
        groups = [nums[i:i + 3] for i in range(0, len(nums), 3)]
        return groups if all(g[2] - g[0] <= k for g in groups) else []
""", """
class Solution:
    def divideArray(self, nums: List[int], k: int) -> List[List[int]]:
        nums = sorted(nums)
        groups = [nums[i:i + 3] for i in range(0, len(nums), 3)]
        return groups if all(g[1] - g[0] <= k for g in groups) else []
""")

_add("weekly-contest-375-double-modular-exponentiation", """
class Solution:
    def getGoodIndices(self, variables: List[List[int]], target: int) -> List[int]:
        return [i for i, (a, b, c, m) in enumerate(variables) if pow(pow(a, b, 10), c, m) == target]
""", """
class Solution:
    def getGoodIndices(self, variables: List[List[int]], target: int) -> List[int]:
        return [i for i, (a, b, c, m) in enumerate(variables) if pow(a, b * c, m) == target]
""")

_add("biweekly-contest-118-minimum-number-of-coins-for-fruits", """
class Solution:
    def minimumCoins(self, prices: List[int]) -> int:
        n = len(prices)
        dp = [0] * (n + 2)
        for i in range(n, 0, -1):
            dp[i] = prices[i - 1] + min(dp[j] for j in range(i + 1, min(2 * i + 1, n + 1) + 1))
        return dp[1]
""", """
class Solution:
    def minimumCoins(self, prices: List[int]) -> int:
        return sum(prices[::2])
""")

_add("weekly-contest-381-count-the-number-of-houses-at-a-certain-distance-i", """
class Solution:
    def countOfPairs(self, n: int, x: int, y: int) -> List[int]:
        res = [0] * n
        for i in range(1, n + 1):
            for j in range(1, n + 1):
                if i != j:
                    d = min(abs(i - j), abs(i - x) + 1 + abs(y - j), abs(i - y) + 1 + abs(x - j))
                    res[d - 1] += 1
        return res
""", """
class Solution:
    def countOfPairs(self, n: int, x: int, y: int) -> List[int]:
        res = [0] * n
        for i in range(1, n + 1):
            for j in range(1, n + 1):
                if i != j:
                    d = min(abs(i - j), abs(i - x) + abs(y - j), abs(i - y) + abs(x - j))
                    res[max(d, 1) - 1] += 1
        return res
""")

_add("weekly-contest-375-count-the-number-of-good-partitions", """
class Solution:
    def numberOfGoodPartitions(self, nums: List[int]) -> int:
        last = {x: i for i, x in enumerate(nums)}
        segments, end = 0, -1
        for i, x in enumerate(nums):
            if i > end:
                segments += 1
            end = max(end, last[x])
        return pow(2, segments - 1, 10 ** 9 + 7)
""", """
class Solution:
    def numberOfGoodPartitions(self, nums: List[int]) -> int:
        last = {x: i for i, x in enumerate(nums)}
        segments, end = 0, -1
        for i, x in enumerate(nums):
            if i > end:
                segments += 1
            end = max(end, last[x])
        return pow(2, segments, 10 ** 9 + 7)
""")

_add("weekly-contest-352-sum-of-imbalance-numbers-of-all-subarrays", """
class Solution:
    def sumImbalanceNumbers(self, nums: List[int]) -> int:
        res = 0
        for i in range(len(nums)):
            seen, groups = set(), 0
            for x in nums[i:]:
                if x not in seen:
                    groups += 1 - (x - 1 in seen) - (x + 1 in seen)
                    seen.add(x)
                res += groups - 1
        return res
""", """
class Solution:
    def sumImbalanceNumbers(self, nums: List[int]) -> int:
        res = 0
        for i in range(len(nums)):
            seen, groups = set(), 0
            for x in nums[i:]:
                if x not in seen:
                    groups += 1 - (x + 1 in seen)
                    seen.add(x)
                res += groups - 1
        return res
""")

# the two linked-list problems: script tasks that run DeepSeek's test block as it is
_LIST_NODE = """
# Definition for singly-linked list.
class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next
"""

_add("weekly-contest-358-double-a-number-represented-as-a-linked-list", _LIST_NODE + """
class Solution:
    def doubleIt(self, head: Optional[ListNode]) -> Optional[ListNode]:
        digits = []
        while head:
            digits.append(str(head.val))
            head = head.next
        out = None
        for d in reversed(str(int("".join(digits)) * 2)):
            out = ListNode(int(d), out)
        return out
""", _LIST_NODE + """
class Solution:
    def doubleIt(self, head: Optional[ListNode]) -> Optional[ListNode]:
        node = head
        while node:
            node.val = node.val * 2 % 10
            node = node.next
        return head
""")

_add("biweekly-contest-110-insert-greatest-common-divisors-in-linked-list", _LIST_NODE + """
class Solution:
    def insertGreatestCommonDivisors(self, head: Optional[ListNode]) -> Optional[ListNode]:
        node = head
        while node and node.next:
            node.next = ListNode(math.gcd(node.val, node.next.val), node.next)
            node = node.next.next
        return head
""", _LIST_NODE + """
class Solution:
    def insertGreatestCommonDivisors(self, head: Optional[ListNode]) -> Optional[ListNode]:
        node = head
        while node and node.next:
            node.next = ListNode(min(node.val, node.next.val), node.next)
            node = node.next.next
        return head
""")
