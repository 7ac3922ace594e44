"""What a newcomer meets on the HTML side (issue 19): links onward from the front page,
error pages in the site's own layout, an icon for every page, forms whose ids are unique
and whose aria references resolve."""

import re

import pytest

from tests.conftest import new_request_id, question
from tests.moderation.conftest import logged_in
from tests.moderation.two_factor_helpers import code_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def production(settings):
    settings.DEBUG = False


def test_the_front_page_leads_to_the_console_and_the_api_docs(client):
    response = client.get("/", follow=True)

    assert response.redirect_chain == [("/threads/", 302)]
    page = response.content.decode()
    assert 'href="/console/"' in page
    assert 'href="/api/v1/docs"' in page
    assert client.get("/api/v1/docs").status_code == 200


def test_a_missing_page_is_answered_in_the_sites_layout(client, production):
    response = client.get("/threads/987654321")

    assert response.status_code == 404
    page = response.content.decode()
    assert "<h1>Not found</h1>" in page
    assert 'rel="stylesheet"' in page and 'href="/threads/"' in page


def test_a_refused_console_action_is_answered_in_the_sites_layout(reader, production):
    response = logged_in(reader).post("/console/posting/pause", {"reason": "try"})

    assert response.status_code == 403
    page = response.content.decode()
    assert "<h1>Not allowed</h1>" in page and 'rel="stylesheet"' in page


@pytest.mark.parametrize("path", ["/favicon.ico"])
def test_the_icon_browsers_ask_for_is_served(client, path):
    response = client.get(path)

    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert response.content.lstrip().startswith(b"<svg")


def test_admin_pages_link_the_icon(administrator):
    page = logged_in(administrator).get("/admin/").content.decode()

    assert re.search(r'<link rel="icon" href="[^"]*favicon[^"]*\.svg"', page)


def test_the_posting_page_has_unique_ids_and_resolving_aria_references(administrator):
    page = logged_in(administrator).get("/console/posting/").content.decode()

    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    for referenced in re.findall(r'aria-describedby="([^"]+)"', page):
        for name in referenced.split():
            assert name in ids, name


def test_an_anonymous_request_is_headed_with_its_scope_once(administrator, client):
    request_id = new_request_id()
    client.post("/api/v1/entries", data=question(request_id=request_id),
                content_type="application/json")

    page = logged_in(administrator).get(
        "/console/operations/", {"request_id": request_id}
    ).content.decode()

    assert "In the anonymous scope" in page
    assert "anonymous anonymous" not in page


def test_the_login_page_names_the_commands_the_readme_names(client):
    page = client.get("/console/login/").content.decode()

    assert "<code>bin/settle createsuperuser</code>" in page
    assert "<code>make manage ARGS=createsuperuser</code>" in page
    assert "<code>manage.py" not in page


def test_the_enrolled_two_factor_page_names_the_commands_the_readme_names(operator):
    console = logged_in(operator)
    secret = console.get("/console/2fa/").context["secret"]
    assert console.post("/console/2fa/", {"code": code_for(secret)}).status_code == 200

    page = console.get("/console/2fa/").content.decode()

    assert f"<code>bin/settle reset_2fa {operator.username}</code>" in page
    assert f"<code>make manage ARGS=\"reset_2fa {operator.username}\"</code>" in page
    assert "<code>manage.py" not in page
