# attack: return an int subclass that compares equal to everything but serialises as 0
# kind: function
# task: add
# verdict: wrong_answer|runtime_error
class Liar(int):
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = int.__hash__


def add(a, b):
    return Liar(-999)  # wrong on every case, whatever it claims
