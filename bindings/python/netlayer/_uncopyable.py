"""Objects that own a native handle refuse to be copied or pickled."""

from __future__ import annotations

from typing import Any, Dict, NoReturn, SupportsIndex


class Uncopyable:
    """A mixin for the objects that own a native handle (a client, a WebSocket, a
    stream): a shallow copy would share the handle, and the first of the two to be
    closed or collected would free it under the other, so ``copy``, ``deepcopy`` and
    ``pickle`` raise ``TypeError`` instead."""

    __slots__ = ()

    def _refuse(self, what: str) -> NoReturn:
        name = type(self).__name__
        raise TypeError(f"netlayer: a {name} owns a native handle and cannot be {what}; make another {name} instead")

    def __copy__(self) -> NoReturn:
        self._refuse("copied")

    def __deepcopy__(self, memo: Dict[int, Any]) -> NoReturn:
        self._refuse("copied")

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        self._refuse("pickled")
