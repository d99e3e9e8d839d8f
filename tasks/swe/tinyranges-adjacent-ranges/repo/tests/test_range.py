import unittest

from tinyranges import Range


class RangeTest(unittest.TestCase):
    def test_len_and_contains(self):
        r = Range(2, 5)
        self.assertEqual(len(r), 3)
        self.assertIn(2, r)
        self.assertIn(4, r)
        self.assertNotIn(5, r)

    def test_invalid(self):
        with self.assertRaises(ValueError):
            Range(3, 1)

    def test_overlaps(self):
        self.assertTrue(Range(1, 4).overlaps(Range(3, 6)))
        self.assertFalse(Range(1, 3).overlaps(Range(3, 6)))

    def test_intersection(self):
        self.assertEqual(Range(1, 4).intersection(Range(3, 6)), Range(3, 4))
        self.assertIsNone(Range(1, 2).intersection(Range(5, 6)))


if __name__ == "__main__":
    unittest.main()
