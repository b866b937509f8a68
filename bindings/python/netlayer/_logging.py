"""The library's log events as records of the standard ``logging`` module.

A client whose config sets ``log.level`` (or, when it does not, whose environment sets
``NETLAYER_LOG=debug|info|error|off``) and has no ``on_log`` hook gets a LOG hook that
turns each event into a record of ``logging.getLogger("netlayer")``: the event's
``level`` picks the record's level (``error``, ``warning``, ``info``, ``debug``), the
message is one readable line, and the event itself is the record's ``netlayer_event``
attribute. Clients without a level keep no hook and get no events. The hook runs on the
library's delivery thread and leaves blocking requests on their caller's thread.
"""

from __future__ import annotations

import logging
import os
import warnings
from typing import Any, Dict, Mapping

__all__ = ["LOGGER", "ENV_LOG", "apply_environment", "logs", "emit"]

LOGGER = logging.getLogger("netlayer")
ENV_LOG = "NETLAYER_LOG"
LEVELS = ("off", "error", "info", "debug")

_RECORD_LEVELS = {"error": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO,
                  "debug": logging.DEBUG}


def apply_environment(document: Dict[str, Any]) -> None:
    """Sets ``log.level`` from ``NETLAYER_LOG`` when the config does not set it."""
    wanted = os.environ.get(ENV_LOG, "").strip().lower()
    if not wanted:
        return
    log = document.get("log")
    if isinstance(log, Mapping) and log.get("level") is not None:
        return  # the config wins over the environment
    if wanted not in LEVELS:
        warnings.warn(f"netlayer: {ENV_LOG}={wanted!r} ignored: expected one of {', '.join(LEVELS)}",
                      RuntimeWarning, stacklevel=4)
        return
    document["log"] = {**(log if isinstance(log, Mapping) else {}), "level": wanted}


def logs(document: Mapping[str, Any]) -> bool:
    """Whether the config asks for log events."""
    log = document.get("log")
    return isinstance(log, Mapping) and log.get("level") not in (None, "off")


def emit(event: Any) -> None:
    """The LOG hook of a client without ``on_log``: one ``logging`` record per event."""
    if not isinstance(event, dict):
        LOGGER.info("%s", event)
        return
    level = _RECORD_LEVELS.get(str(event.get("level")), logging.INFO)
    if LOGGER.isEnabledFor(level):
        LOGGER.log(level, "%s", _message(event), extra={"netlayer_event": event})


def _message(event: Mapping[str, Any]) -> str:
    kind = event.get("event")
    where = f" (request {event.get('id')}, attempt {event.get('attempt')})" if "id" in event else ""
    if kind == "request":
        curl = f": {event['curl']}" if event.get("curl") else ""
        return f"request {event.get('method')} {event.get('url')}{where}{curl}"
    if kind == "response":
        return (f"response {event.get('status')} in {event.get('elapsedMs')} ms, "
                f"{event.get('bodyBytes')} bytes{where}")
    if kind == "error":
        return (f"error {event.get('kind')}: {event.get('message')} "
                f"({event.get('method')} {event.get('url')}){where}")
    return f"{kind}: {event.get('message', event)}"
