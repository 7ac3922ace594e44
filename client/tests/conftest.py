"""A live Settle (gunicorn on the test database) behind a fault-injecting proxy."""

import uuid

import pytest
from faults import FaultProxy

from tests.e2e.conftest import database_url, gunicorn_serving


@pytest.fixture(scope="session")
def settle_server(django_db_setup, django_db_blocker, tmp_path_factory):
    """Three sync gunicorn workers on the test database (tests/e2e/conftest.py's live
    server), without the hourly limits in the way; yields their port."""
    with django_db_blocker.unblock():
        url = database_url()
    log = tmp_path_factory.mktemp("settle") / "gunicorn.log"
    with gunicorn_serving(
        log, url, SETTLE_SOURCE_HOURLY_LIMIT="100000", SETTLE_OVERALL_HOURLY_LIMIT="100000"
    ) as port:
        yield port


@pytest.fixture
def proxy(settle_server):
    faults = FaultProxy(settle_server)
    yield faults
    faults.close()


@pytest.fixture
def token(transactional_db):
    from board.services import token_issue

    return token_issue(name=f"agent-{uuid.uuid4().hex[:8]}")[1]


@pytest.fixture(params=["http", "mcp"])
def transport(request):
    """Each test taking it runs once over HTTP and once over MCP."""
    return request.param


@pytest.fixture
def journal(tmp_path):
    return tmp_path / "state" / "journal.sqlite3"
