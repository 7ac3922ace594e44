"""Request bodies sent without a length (`Transfer-Encoding: chunked`).

Django reads a WSGI request's body by its CONTENT_LENGTH, and a chunked request has
none: its body read as empty, so a JSON post was refused as "not valid JSON" (an HTTP
client streaming its body, httpx given a generator, say, sends chunked). gunicorn
decodes the chunks itself and marks the stream `wsgi.input_terminated`: it ends where
the body ends. Such a body is read here up to one byte past Django's own cap and handed
on with its length, so every size check below sees it as it would a body with a length.
A server that does not mark its stream so (runserver) is left as it is.
"""

import io
from collections.abc import Callable, Iterable


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
            body = environ["wsgi.input"].read(self.limit + 1)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return self.application(environ, start_response)
