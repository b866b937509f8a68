"""The WSGI app test_roundtrip_httpbin.py serves with gunicorn: httpbin, plus one view.

httpbin echoes query arguments, form fields, JSON bodies and headers as its parser
(werkzeug, under gunicorn) decoded them, but not multipart filenames, repeated file
parts or the decoded path. Requests under ``/werkzeug/`` get those from werkzeug's own
``Request``: the view below only copies what werkzeug parsed into JSON.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Callable, Dict, Iterable, List

from httpbin import app as httpbin_app
from werkzeug.wrappers import Request, Response

PREFIX = "/werkzeug/"


def _echo(request: Request) -> Dict[str, Any]:
    parts: List[Dict[str, Any]] = []
    for name, value in request.form.items(multi=True):
        parts.append({"name": name, "text": value})
    for name, storage in request.files.items(multi=True):
        parts.append({"name": name, "filename": storage.filename,
                      "base64": base64.b64encode(storage.read()).decode("ascii")})
    return {"path": request.path, "parts": parts}


def app(environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    if environ.get("PATH_INFO", "").startswith(PREFIX):
        request = Request(environ)
        response = Response(json.dumps(_echo(request)), mimetype="application/json")
        return response(environ, start_response)
    return httpbin_app(environ, start_response)  # type: ignore[no-any-return]
