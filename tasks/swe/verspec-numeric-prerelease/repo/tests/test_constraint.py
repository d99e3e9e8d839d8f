import unittest

from verspec import Constraint, ConstraintError, Version, latest


class ConstraintTest(unittest.TestCase):
    def test_range(self):
        c = Constraint.parse(">=1.2, <2")
        self.assertTrue(c.allows(Version.parse("1.2.0")))
        self.assertTrue(c.allows(Version.parse("1.99.0")))
        self.assertFalse(c.allows(Version.parse("2.0.0")))
        self.assertFalse(c.allows(Version.parse("1.1.9")))

    def test_not_equal(self):
        c = Constraint.parse("!=1.3.0")
        self.assertFalse(c.allows(Version.parse("1.3.0")))

    def test_bad_constraint(self):
        with self.assertRaises(ConstraintError):
            Constraint.parse("~>1.2")

    def test_latest(self):
        versions = ["1.0.0", "1.4.0", "2.1.0", "1.9.0-beta"]
        self.assertEqual(str(latest(versions)), "2.1.0")
        self.assertEqual(str(latest(versions, "<2")), "1.9.0-beta")


if __name__ == "__main__":
    unittest.main()
