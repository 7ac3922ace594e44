"""The agents' routes (/api/v1/ but its docs, /mcp) run only the middleware they need
(issue 18): no sessions, CSRF, login, second factor, messages or login lock, while every
page runs them all and every answer keeps what SPEC 5, 7.1 and 12 ask of it."""

import pytest
from axes.middleware import AxesMiddleware
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.middleware.csrf import CsrfViewMiddleware
from django_otp.middleware import OTPMiddleware

from board.serving.middleware import machine_route
from moderation.access.sessions import ConsoleSessionMiddleware
from moderation.access.two_factor import SecondFactorMiddleware
from tests.board.mcp_support import tool_result
from tests.conftest import question

pytestmark = pytest.mark.django_db

BROWSER_ONLY = {
    SessionMiddleware: "process_request",
    CsrfViewMiddleware: "process_request",
    AuthenticationMiddleware: "process_request",
    MessageMiddleware: "process_request",
    OTPMiddleware: "__call__",
    ConsoleSessionMiddleware: "__call__",
    SecondFactorMiddleware: "__call__",
    AxesMiddleware: "__call__",
}


@pytest.fixture
def ran(monkeypatch) -> list[str]:
    """The browser-only middleware that ran, spied on (each still does its work)."""
    seen: list[str] = []
    for cls, method in BROWSER_ONLY.items():
        original = getattr(cls, method)

        def spy(self, *args, _original=original, _name=cls.__name__, **kwargs):
            seen.append(_name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, method, spy)
    return seen


def test_it_names_the_agents_routes():
    assert machine_route("/api/v1/entries")
    assert machine_route("/api/v1/no-such-path")
    assert machine_route("/mcp")
    assert not machine_route("/api/v1/docs")
    assert not machine_route("/mcp/other")
    assert not machine_route("/console/")
    assert not machine_route("/threads/")


def test_it_runs_no_browser_middleware_for_a_post(agent, ran):
    response = agent.post(question())

    assert response.status_code == 201
    assert ran == []


def test_it_runs_no_browser_middleware_for_an_mcp_call(agent, ran):
    result = tool_result(agent.client, "post_entry", question(), token=agent.token)

    assert result["structuredContent"]["http_status"] == 201
    assert ran == []


@pytest.mark.parametrize("path", ["/threads/", "/api/v1/docs", "/console/login/"])
def test_it_runs_every_middleware_for_a_page(client, ran, path):
    response = client.get(path, HTTP_HOST="localhost")

    assert response.status_code == 200
    assert set(ran) == {cls.__name__ for cls in BROWSER_ONLY}


def test_an_api_answer_keeps_its_headers_and_sets_no_cookie(agent, operator):
    agent.client.force_login(operator)  # a browser's session cookie rides along

    response = agent.post(question())

    assert response.status_code == 201
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert int(response["Content-Length"]) == len(response.content)
    assert not response.cookies
    assert "Cookie" not in response.get("Vary", "")
    # The page policy is for what a browser renders; a JSON answer loads nothing.
    assert "Content-Security-Policy" not in response


def test_an_unknown_api_path_and_a_wrong_method_keep_the_api_shape(agent):
    missing = agent.get("/api/v1/no-such-path")
    wrong = agent.client.put("/api/v1/entries", HTTP_AUTHORIZATION=f"Bearer {agent.token}")

    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"
    assert wrong.status_code == 405
    assert wrong.json()["error"]["code"] == "method_not_allowed"


def test_a_foreign_browser_origin_is_still_refused(agent):
    response = agent.post(question(), HTTP_ORIGIN="https://elsewhere.example")

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "forbidden"


def test_a_disallowed_host_is_still_refused_on_the_api(agent):
    response = agent.post(question(), HTTP_HOST="evil.example")

    assert response.status_code == 400
    assert "ALLOWED_HOSTS" in response.json()["error"]["message"]


def test_a_reshaped_refusal_keeps_the_headers_of_every_api_answer(agent):
    """What ApiErrorShapeMiddleware rewrites (Django's or ninja's own 405, the 400 for a
    Host outside ALLOWED_HOSTS) keeps the headers SecurityMiddleware and the frame rule
    gave the answer it replaces, like every other answer under /api/v1/."""
    wrong = agent.client.put("/api/v1/entries", HTTP_AUTHORIZATION=f"Bearer {agent.token}")
    foreign_host = agent.post(question(), HTTP_HOST="evil.example")

    for response in (wrong, foreign_host):
        assert response["Content-Type"] == "application/json"
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["X-Frame-Options"] == "DENY"
        assert response["Referrer-Policy"] == "same-origin"
        assert "Content-Security-Policy" not in response
    assert wrong["Allow"] == "POST"


@pytest.mark.parametrize("path", ["/threads/", "/mcp"])
def test_the_error_page_for_a_disallowed_host_carries_the_frame_rule(client, path):
    """SPEC 7.1: every HTML page, error pages too, sends X-Frame-Options: DENY beside its
    policy; the 400 for a Host outside ALLOWED_HOSTS is answered before most middleware."""
    response = client.get(path, HTTP_HOST="evil.example")

    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
