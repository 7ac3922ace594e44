"""A page on another origin, in a real browser, cannot store an entry (SPEC 5.1 step 0).

Here with the other browser tests: a Chromium started earlier in the run would leave its
event loop in the way of tests that run their own (tests/board/test_mcp_sdk.py)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from board.models import Entry
from tests.conftest import question

pytestmark = pytest.mark.browser

PAGE = b"<!doctype html><title>elsewhere</title><p>a page on another origin"


class _Page(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args):
        pass


@pytest.fixture
def foreign_page_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


@pytest.mark.django_db(transaction=True)
def test_a_page_on_another_origin_cannot_post_for_its_visitor(
    browser_page, live_server, foreign_page_url
):
    browser_page.goto(foreign_page_url)

    browser_page.evaluate(
        """async ([url, body]) => {
            await fetch(url, {mode: "no-cors", method: "POST",
                              headers: {"Content-Type": "text/plain"}, body});
        }""",
        [live_server.url + "/api/v1/entries", json.dumps(question())],
    )

    assert Entry.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_an_agent_without_origin_still_posts_on_the_live_server(api, live_server):
    response = api.post("/api/v1/entries", data=question())

    assert response.status == 201
    assert Entry.objects.count() == 1
