import unittest

from slugkit import slugify


class SlugifyTest(unittest.TestCase):
    def test_basic(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")
        self.assertEqual(slugify("  many   spaces  "), "many-spaces")

    def test_separator(self):
        self.assertEqual(slugify("a b c", sep="_"), "a_b_c")

    def test_letters_without_decomposition(self):
        self.assertEqual(slugify("Straße"), "strasse")
        self.assertEqual(slugify("Ærø"), "aero")

    def test_max_length_drops_words(self):
        self.assertEqual(slugify("the quick brown fox", max_length=12), "the-quick")
        self.assertEqual(slugify("supercalifragilistic", max_length=5), "super")


if __name__ == "__main__":
    unittest.main()
