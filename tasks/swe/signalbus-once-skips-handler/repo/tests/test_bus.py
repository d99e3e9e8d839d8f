import unittest

from signalbus import Bus


class BusTest(unittest.TestCase):
    def test_handlers_run_in_order(self):
        bus, seen = Bus(), []
        bus.on("e", lambda x: seen.append(("a", x)))
        bus.on("e", lambda x: seen.append(("b", x)))
        self.assertEqual(bus.emit("e", 1), 2)
        self.assertEqual(seen, [("a", 1), ("b", 1)])

    def test_unknown_event(self):
        self.assertEqual(Bus().emit("nothing"), 0)

    def test_cancel(self):
        bus, seen = Bus(), []
        sub = bus.on("e", seen.append)
        sub.cancel()
        sub.cancel()
        bus.emit("e", 1)
        self.assertEqual(seen, [])

    def test_once_runs_once(self):
        bus, seen = Bus(), []
        bus.once("e", seen.append)
        bus.emit("e", 1)
        bus.emit("e", 2)
        self.assertEqual(seen, [1])

    def test_kwargs(self):
        bus, seen = Bus(), []
        bus.on("e", lambda **kw: seen.append(kw))
        bus.emit("e", a=1)
        self.assertEqual(seen, [{"a": 1}])


if __name__ == "__main__":
    unittest.main()
