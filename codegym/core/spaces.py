"""The observation and action space of codegym environments: unrestricted text.

Gymnasium's `Text` space only admits characters of a fixed charset, but code and
model output are arbitrary Unicode. `CodeText` is a `Text` (so Gymnasium's
vector utilities, `batch_space` and `check_env` treat it as text) whose
`contains` accepts any string up to `max_length` characters, and whose
`sample` draws printable ASCII with whitespace. It also registers shared-memory
handlers storing Unicode code points, so `gym.make_vec(..., "async")` works with
the default `shared_memory=True` without the user knowing about it.
"""

from __future__ import annotations

import multiprocessing as mp
import string
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.spaces import Text
from gymnasium.vector.utils import shared_memory as _sm

#: what `sample()` draws from: printable ASCII, including whitespace
SAMPLE_CHARSET = string.printable


class CodeText(Text):
    """Any string of at most `max_length` characters (any Unicode, any whitespace).

    >>> space = CodeText(100)
    >>> "def f():\\n    return 'π'\\n" in space
    True
    >>> "x" * 101 in space
    False
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed=None) -> None:
        super().__init__(max_length, min_length=min_length, charset=SAMPLE_CHARSET, seed=seed)
        self.sample_max_length = 256

    def sample(self, mask=None, probability=None) -> str:
        """A random printable-ASCII string of at most `sample_max_length` characters.

        (Uniform lengths up to `max_length` would make random actions megabytes long.)"""
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        hi = min(self.max_length, self.sample_max_length)
        length = int(self.np_random.integers(self.min_length, hi + 1))
        idx = self.np_random.integers(0, len(SAMPLE_CHARSET), size=length)
        return "".join(SAMPLE_CHARSET[i] for i in idx)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"CodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, CodeText) and self.min_length == other.min_length
                and self.max_length == other.max_length)

    def __hash__(self) -> int:  # spaces are compared in vector envs
        return hash(("CodeText", self.min_length, self.max_length))


# --- shared memory for AsyncVectorEnv: one int32 length + max_length code points per env
@_sm.create_shared_memory.register(CodeText)
def _create(space: CodeText, n: int = 1, ctx=None):
    ctx = ctx or mp
    return ctx.Array(np.dtype(np.int32).char, n * (space.max_length + 1), lock=True)


class SharedTextView(Sequence):
    """The batch of texts in a shared buffer, decoded on access.

    `AsyncVectorEnv` reads its shared buffer once, at construction, and expects a
    view that follows later writes (numpy arrays do). Strings cannot be views,
    so this sequence decodes the current contents whenever it is read; its
    `deepcopy` (what the vector env returns with ``copy=True``) is a plain tuple.
    """

    def __init__(self, space: CodeText, shared_memory, n: int):
        self._data = np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length + 1))

    def __len__(self) -> int:
        return self._data.shape[0]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(len(self))))
        row = self._data[i]
        length = int(row[0])
        return row[1:1 + length].astype("<u4").tobytes().decode("utf-32-le")

    def __deepcopy__(self, memo) -> tuple[str, ...]:
        return tuple(self)

    def __eq__(self, other) -> bool:
        return tuple(self) == tuple(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return f"SharedTextView({tuple(self)!r})"


@_sm.read_from_shared_memory.register(CodeText)
def _read(space: CodeText, shared_memory, n: int = 1):
    return SharedTextView(space, shared_memory, n)


@_sm.write_to_shared_memory.register(CodeText)
def _write(space: CodeText, index: int, value: str, shared_memory) -> None:
    size = space.max_length + 1
    dest = np.frombuffer(shared_memory.get_obj(), dtype=np.int32)
    codes = np.frombuffer(value.encode("utf-32-le"), dtype="<u4").astype(np.int32)
    if len(codes) > space.max_length:
        raise ValueError(f"text of {len(codes)} characters does not fit {space!r}")
    dest[index * size] = len(codes)
    dest[index * size + 1: index * size + 1 + len(codes)] = codes
