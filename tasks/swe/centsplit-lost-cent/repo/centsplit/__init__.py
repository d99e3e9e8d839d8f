"""Money in integer minor units, with exact splitting."""

from centsplit.currency import Currency, get_currency
from centsplit.money import Money, MoneyError

__all__ = ["Currency", "get_currency", "Money", "MoneyError"]
