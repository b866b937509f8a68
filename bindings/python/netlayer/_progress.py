"""Per-request progress: ``client.get(..., on_progress=fn)`` and the asyncio siblings.

Such a request is started with nl_request_start and an on_progress callback of its
own (``_callbacks``), so ``fn`` sees only that request's events, however many requests
run at once. ``fn`` answers like a hook: a dict (``{"cancel": True}`` stops the
transfer) or None. When it raises, the request fails with InvalidRequestError
``"on_progress callback raised ValueError: ..."`` and the exception as ``__cause__``:
the entry keeps its own failure, so no lookup is needed.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple, Union

from . import _callbacks, _json
from ._errors import Error
from ._hooks import HookFunction, answer
from ._result import Response, outcome

__all__ = ["ProgressRequest", "progress_payload"]


def progress_payload(document: Dict[str, Any]) -> Tuple[bytes, HookFunction]:
    """Takes ``on_progress`` out of an endpoint document (turning ``"progress"`` on
    unless the document says otherwise) and encodes the rest."""
    function = document.pop("on_progress")
    if not callable(function):
        raise TypeError(f"netlayer: on_progress must be callable, not {type(function).__name__}")
    if document.get("progress") is None:
        document["progress"] = True
    return _json.dumps(document), function


class ProgressRequest(_callbacks.Request):
    """A request whose progress events go to one Python function."""

    __slots__ = ("function", "settle", "failure")

    def __init__(self, owner: object, function: HookFunction, settle: Callable[[bytes], Any]) -> None:
        super().__init__(owner)
        self.function = function
        self.settle = settle  # receives the result document (on a library thread)
        self.failure: Optional[Tuple[str, BaseException]] = None

    def progress(self, request_id: int, event_json: Optional[int], reply: Optional[int]) -> None:
        if self.failure is not None:
            return  # failed already: the rest of the transfer is being torn down
        event = _callbacks.loads_event(event_json)
        self.failure = answer(self.function, event, reply, "on_progress callback")

    def complete(self, request_id: int, raw: bytes) -> None:
        self.settle(raw)

    def result(self, raw: bytes, request_id: int) -> Union[Response, Error]:
        """The Response, or the Error (not raised) with the callback's exception as cause."""
        result = outcome(_json.loads(raw), request_id)
        if isinstance(result, Error) and self.failure is not None and result.message == self.failure[0]:
            result.__cause__ = self.failure[1]
        return result

    def response_or_raise(self, raw: bytes, request_id: int) -> Response:
        result = self.result(raw, request_id)
        if isinstance(result, Error):
            raise result
        return result
