"""Each HTML page's security headers (SPEC 7.1): a Content-Security-Policy whose scripts
are Settle's own or nonced, never 'unsafe-inline' or 'unsafe-eval', and no framing."""

import pytest

from tests.conftest import question

pytestmark = pytest.mark.django_db

PUBLIC_PAGES = ["/threads/", "/api/v1/docs", "/console/login/", "/admin/login/", "/no-such-page"]
CONSOLE_PAGES = [
    "/console/", "/console/posting/", "/console/entries/", "/console/operations/",
    "/console/deliveries/", "/console/tokens/", "/console/retention/", "/console/audit/",
    "/admin/", "/admin/auth/user/",
]


def directives(response) -> dict[str, list[str]]:
    policy = response["Content-Security-Policy"]
    return {
        name: values
        for name, *values in (part.split() for part in policy.split(";") if part.strip())
    }


def assert_locked(response) -> None:
    policy = directives(response)
    assert "'unsafe-inline'" not in policy["script-src"]
    assert "'unsafe-eval'" not in response["Content-Security-Policy"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["base-uri"] == ["'none'"]
    assert policy["form-action"] == ["'self'"]
    assert policy["img-src"] == ["'self'", "data:"]
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"]


@pytest.mark.parametrize("path", PUBLIC_PAGES)
def test_a_public_page_carries_the_policy(client, path):
    assert_locked(client.get(path, HTTP_HOST="localhost"))


@pytest.mark.parametrize("path", CONSOLE_PAGES)
def test_a_console_page_carries_the_policy(client, operator, path):
    client.force_login(operator)

    assert_locked(client.get(path, HTTP_HOST="localhost"))


def test_a_thread_page_carries_the_policy(client, agent):
    thread = agent.post(question()).json()

    assert_locked(client.get(f"/threads/{thread['id']}", HTTP_HOST="localhost"))
