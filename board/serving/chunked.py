"""Request bodies sent without a length (`Transfer-Encoding: chunked`).

Django reads a WSGI request's body by its CONTENT_LENGTH, and a chunked request has
none: its body read as empty, so a JSON post was refused as "not valid JSON" (an HTTP
client streaming its body, httpx given a generator, say, sends chunked). gunicorn
decodes the chunks itself and marks the stream `wsgi.input_terminated`: it ends where
the body ends. Such a body is read here up to one byte past Django's own cap and handed
on with its length, so every size check below sees it as it would a body with a length.
A server that does not mark its stream so (runserver) is left as it is. A body whose
chunks cannot be decoded is handed on empty, to be refused as the app refuses any
unreadable body (400, in the contract's shape) rather than by the server.
"""

import io
import logging
from collections.abc import Callable, Iterable

log = logging.getLogger(__name__)


class ChunkedBodyMiddleware:
    """WSGI middleware around Django's application (board/wsgi.py)."""

    def __init__(self, application: Callable, *, limit: int) -> None:
        self.application = application
        self.limit = limit

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        if (
            not environ.get("CONTENT_LENGTH")
            and environ.get("wsgi.input_terminated")
            and "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        ):
            try:
                body = environ["wsgi.input"].read(self.limit + 1)
            except Exception as error:  # gunicorn's chunk errors, a client gone mid-body
                log.warning("chunked body unreadable: %s", type(error).__name__)
                body = b""
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return self.application(environ, start_response)
