"""A webhook receiver to try Settle's deliveries on a laptop: it verifies each notice,
prints it, keeps its webhook-id, and answers the lookup (docs/deliveries.md).

    .venv/bin/python examples/webhook_receiver.py whsec_... [PORT]   # PORT: 9000
"""

import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from standardwebhooks.webhooks import Webhook

hook, seen = Webhook(sys.argv[1]), set()


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # a notice: verify, keep its webhook-id, then answer 2xx
        body = self.rfile.read(int(self.headers["Content-Length"]))
        print(hook.verify(body, dict(self.headers)), flush=True)
        seen.add(self.headers["webhook-id"])
        self.send_response(200)
        self.end_headers()

    def do_GET(self) -> None:  # the lookup GET /seen/<delivery id>, signed over an empty body
        hook.verify(b"", dict(self.headers), json_parse=False)
        self.send_response(200 if self.path.rsplit("/", 1)[-1] in seen else 404)
        self.end_headers()


port = int(sys.argv[2]) if len(sys.argv) > 2 else 9000
print(f"receiving on http://127.0.0.1:{port}/ (Ctrl-C stops it)", flush=True)
HTTPServer(("127.0.0.1", port), Receiver).serve_forever()
