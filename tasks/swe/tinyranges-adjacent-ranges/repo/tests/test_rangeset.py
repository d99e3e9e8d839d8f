import unittest

from tinyranges import Range, RangeSet


class RangeSetTest(unittest.TestCase):
    def test_overlapping_ranges_merge(self):
        rs = RangeSet([Range(5, 8), Range(1, 3), Range(2, 4)])
        self.assertEqual(rs.ranges, (Range(1, 4), Range(5, 8)))

    def test_contains(self):
        rs = RangeSet([Range(1, 3), Range(10, 12)])
        self.assertIn(1, rs)
        self.assertIn(11, rs)
        self.assertNotIn(3, rs)
        self.assertNotIn(0, rs)

    def test_len_counts_integers(self):
        self.assertEqual(len(RangeSet([Range(0, 4), Range(2, 6)])), 6)

    def test_empty_ranges_are_dropped(self):
        self.assertEqual(RangeSet([Range(3, 3)]).ranges, ())

    def test_intersection(self):
        a = RangeSet([Range(0, 5), Range(8, 12)])
        b = RangeSet([Range(3, 9)])
        self.assertEqual(a.intersection(b).ranges, (Range(3, 5), Range(8, 9)))


if __name__ == "__main__":
    unittest.main()
