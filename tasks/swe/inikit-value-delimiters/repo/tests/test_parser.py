import unittest

from inikit import ParseError, loads

SAMPLE = """
# a comment
[server]
host = example.org
port: 8080   ; inline comment
debug = yes

[paths]
roots =
    /srv/a
    /srv/b
"""


class ParserTest(unittest.TestCase):
    def test_sections_and_keys(self):
        cfg = loads(SAMPLE)
        self.assertEqual(list(cfg), ["server", "paths"])
        self.assertEqual(cfg["server"]["host"], "example.org")
        self.assertEqual(cfg["server"]["port"], "8080")

    def test_continuation_lines(self):
        cfg = loads(SAMPLE)
        self.assertEqual(cfg["paths"].get_list("roots"), ["/srv/a", "/srv/b"])

    def test_keys_are_case_insensitive(self):
        cfg = loads("[s]\nName = x\n")
        self.assertEqual(cfg["s"]["NAME"], "x")

    def test_defaults(self):
        cfg = loads("[DEFAULT]\ntimeout = 5\n[a]\nx = 1\n[b]\ntimeout = 9\n")
        self.assertEqual(cfg["a"].get_int("timeout"), 5)
        self.assertEqual(cfg["b"].get_int("timeout"), 9)

    def test_errors_name_the_line(self):
        with self.assertRaises(ParseError) as cm:
            loads("[s]\nok = 1\nnot a pair\n")
        self.assertEqual(cm.exception.lineno, 3)
        with self.assertRaises(ParseError):
            loads("x = 1\n")
        with self.assertRaises(ParseError):
            loads("[s]\na = 1\na = 2\n")


class TypedGetterTest(unittest.TestCase):
    def test_bool(self):
        cfg = loads("[s]\na = on\nb = False\nc = maybe\n")
        self.assertTrue(cfg["s"].get_bool("a"))
        self.assertFalse(cfg["s"].get_bool("b"))
        with self.assertRaises(ValueError):
            cfg["s"].get_bool("c")
        self.assertIsNone(cfg["s"].get_bool("missing"))


if __name__ == "__main__":
    unittest.main()
