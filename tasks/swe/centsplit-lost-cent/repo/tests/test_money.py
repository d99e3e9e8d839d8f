import unittest

from centsplit import Money, MoneyError


class ParseTest(unittest.TestCase):
    def test_parse_and_str(self):
        self.assertEqual(str(Money.parse("12.34 EUR")), "12.34 EUR")
        self.assertEqual(str(Money.parse("-0.5 usd")), "-0.50 USD")
        self.assertEqual(str(Money.parse("1500 JPY")), "1500 JPY")

    def test_too_many_decimals(self):
        with self.assertRaises(MoneyError):
            Money.parse("1.234 EUR")

    def test_garbage(self):
        with self.assertRaises(MoneyError):
            Money.parse("twelve euros")


class ArithmeticTest(unittest.TestCase):
    def test_add_and_subtract(self):
        a, b = Money.parse("1.10 EUR"), Money.parse("2.25 EUR")
        self.assertEqual(a + b, Money.parse("3.35 EUR"))
        self.assertEqual(a - b, Money.parse("-1.15 EUR"))

    def test_currencies_do_not_mix(self):
        with self.assertRaises(MoneyError):
            Money.parse("1 EUR") + Money.parse("1 USD")


class SplitTest(unittest.TestCase):
    def test_even_split(self):
        shares = Money.parse("100.00 EUR").split(4)
        self.assertEqual([str(s) for s in shares], ["25.00 EUR"] * 4)

    def test_allocate_by_ratio(self):
        shares = Money.parse("100.00 EUR").allocate([1, 3])
        self.assertEqual([str(s) for s in shares], ["25.00 EUR", "75.00 EUR"])

    def test_bad_ratios(self):
        with self.assertRaises(MoneyError):
            Money.parse("1 EUR").allocate([0, 0])


if __name__ == "__main__":
    unittest.main()
