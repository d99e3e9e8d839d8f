import unittest

from verspec import Version, VersionError


class ParseTest(unittest.TestCase):
    def test_round_trip(self):
        for text in ("1.2.3", "0.0.1", "2.0.0-rc.1", "1.0.0-alpha+exp.sha.5114f85"):
            self.assertEqual(str(Version.parse(text)), text)

    def test_leading_v(self):
        self.assertEqual(Version.parse("v1.2.3"), Version(1, 2, 3))

    def test_invalid(self):
        for text in ("1.2", "01.2.3", "1.2.3-", "1.2.3+", "x.y.z"):
            with self.assertRaises(VersionError, msg=text):
                Version.parse(text)


class OrderTest(unittest.TestCase):
    def test_release_order(self):
        self.assertLess(Version.parse("1.2.3"), Version.parse("1.10.0"))
        self.assertLess(Version.parse("1.9.9"), Version.parse("2.0.0"))

    def test_prerelease_before_release(self):
        self.assertLess(Version.parse("1.0.0-alpha"), Version.parse("1.0.0"))

    def test_alphanumeric_prereleases(self):
        self.assertLess(Version.parse("1.0.0-alpha"), Version.parse("1.0.0-beta"))
        self.assertLess(Version.parse("1.0.0-alpha"), Version.parse("1.0.0-alpha.beta"))

    def test_build_is_ignored(self):
        self.assertEqual(Version.parse("1.0.0+a"), Version.parse("1.0.0+b"))


class BumpTest(unittest.TestCase):
    def test_bump(self):
        v = Version.parse("1.4.2-rc.1")
        self.assertEqual(str(v.bump("major")), "2.0.0")
        self.assertEqual(str(v.bump("minor")), "1.5.0")
        self.assertEqual(str(v.bump("patch")), "1.4.2")


if __name__ == "__main__":
    unittest.main()
