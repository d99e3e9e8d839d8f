import unittest

from slugkit import UniqueSlugger


class UniqueTest(unittest.TestCase):
    def test_suffixes(self):
        s = UniqueSlugger()
        self.assertEqual([s("Notes"), s("notes"), s("NOTES!")], ["notes", "notes-2", "notes-3"])

    def test_taken(self):
        s = UniqueSlugger(taken={"about"})
        self.assertEqual(s("About"), "about-2")

    def test_empty_title(self):
        s = UniqueSlugger()
        self.assertEqual([s("!!!"), s("???")], ["item", "item-2"])


if __name__ == "__main__":
    unittest.main()
