# attack: return an object whose __eq__ is always True (and __ne__ always False, hash 0)
# kind: function
# task: add
# verdict: wrong_answer|runtime_error
class Anything:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __hash__(self):
        return 0

    def __repr__(self):
        return "3"


def add(a, b):
    return Anything()
