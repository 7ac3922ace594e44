"""The console's deliveries page, endpoints side (SPEC 7, 9): who sees and does what,
the secret shown once, refusals that change nothing. Deliveries themselves, made by the
real engine against a real receiver, are in test_pages_inbox.py."""

from datetime import timedelta

import pytest

from maintenance.deliveries.models import Endpoint
from moderation import actions as moderation
from moderation.models import AuditEvent
from tests.moderation.conftest import logged_in

pytestmark = pytest.mark.django_db

PAGE = "/console/deliveries/"
URL = "https://hooks.example.com/settle/in?token=receiver-secret"


@pytest.fixture(autouse=True)
def public_url(settings):
    settings.SETTLE_PUBLIC_URL = "https://settle.example"


def add(client, **fields):
    data = {"name": "crm", "url": URL, "supports": "none", **fields}
    return client.post("/console/deliveries/endpoints/add", data)


def endpoint(name: str = "crm", **kwargs) -> Endpoint:
    return moderation.endpoint_add(actor="op", name=name, url=URL, **kwargs)[0]


def audited(action: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action=action))


def test_adding_an_endpoint_shows_its_secret_once_and_never_again(administrator):
    console = logged_in(administrator)

    response = add(
        console, supports="lookup", lookup_url="https://hooks.example.com/s/{delivery_id}"
    )

    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    secret = response.context["secret"]
    assert secret.startswith("whsec_") and secret in response.content.decode()
    assert all(secret not in morsel.value for morsel in response.cookies.values())
    assert all(secret not in header for header in response.headers.values())
    stored = Endpoint.objects.get()
    assert (stored.name, stored.url, stored.supports) == ("crm", URL, "lookup")
    assert stored.enabled
    assert secret not in console.get(PAGE).content.decode()
    (event,) = audited("endpoint_add")
    assert event.actor == "admin" and secret not in str(event.details)
    assert "receiver-secret" not in str(event.details)


@pytest.mark.parametrize(
    "fields, why",
    [
        ({"url": "http://hooks.example.com/in"}, "must use https"),
        ({"url": "https://user:pw@hooks.example.com/in"}, "user name or password"),
        ({"url": "http://127.0.0.1:9/in", "allow_private": "on"}, "a reason is required"),
        ({"supports": "lookup"}, "needs a lookup URL"),
        ({"name": ""}, "Name: This field is required"),
    ],
)
def test_adding_a_refused_endpoint_says_why_and_changes_nothing(administrator, fields, why):
    response = add(logged_in(administrator), **fields)

    assert response.status_code == 200
    assert why in response.content.decode()
    assert "secret" not in response.context or response.context.get("secret") is None
    assert Endpoint.objects.count() == 0 and AuditEvent.objects.count() == 0


def test_adding_an_endpoint_needs_the_public_url(administrator, settings):
    settings.SETTLE_PUBLIC_URL = ""

    response = add(logged_in(administrator))

    assert "SETTLE_PUBLIC_URL" in response.content.decode()
    assert Endpoint.objects.count() == 0


def test_allowing_private_addresses_needs_and_records_a_reason(administrator):
    response = add(
        logged_in(administrator), url="http://10.0.0.5:8080/in", allow_private="on",
        reason="the CRM runs inside our network",
    )

    assert response.status_code == 200
    stored = Endpoint.objects.get()
    assert stored.allow_private and stored.private_reason == "the CRM runs inside our network"
    assert audited("endpoint_add")[0].reason == "the CRM runs inside our network"


def test_disabling_shows_why_and_when_and_enabling_undoes_it(administrator):
    endpoint()
    console = logged_in(administrator)

    console.post(
        "/console/deliveries/endpoints/disable", {"name": "crm", "reason": "CRM migration"}
    )

    stored = Endpoint.objects.get()
    assert not stored.enabled and stored.disabled_reason == "CRM migration"
    page = console.get(PAGE).content.decode()
    assert "disabled</span>" in page and "CRM migration" in page and ">Enable</button>" in page
    console.post("/console/deliveries/endpoints/enable", {"name": "crm"})
    assert Endpoint.objects.get().enabled
    assert [e.action for e in AuditEvent.objects.order_by("id")][-2:] == [
        "endpoint_disable", "endpoint_enable"
    ]


def test_enabling_an_enabled_endpoint_is_refused_with_a_message(administrator):
    endpoint()

    response = logged_in(administrator).post(
        "/console/deliveries/endpoints/enable", {"name": "crm"}, follow=True
    )

    message = "Nothing changed: endpoint &#x27;crm&#x27; is already enabled."
    assert message in response.content.decode()
    assert audited("endpoint_enable") == []


def test_rotating_shows_the_new_secret_once_and_keeps_the_old_one_signing(administrator):
    before = Endpoint.objects.get(pk=endpoint().pk).secret

    console = logged_in(administrator)
    response = console.post("/console/deliveries/endpoints/rotate", {"name": "crm"})

    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    stored = Endpoint.objects.get()
    assert response.context["secret"] == stored.secret != before
    assert stored.previous_secret == before and stored.previous_secret_expires_at is not None
    assert before not in response.content.decode()
    assert len(audited("endpoint_rotate")) == 1


@pytest.mark.parametrize("who", ["moderator", "reader"])
def test_others_see_scheme_and_host_only_and_no_controls(request, who):
    endpoint(supports="lookup", lookup_url="https://hooks.example.com/look/{delivery_id}?k=s3")

    page = logged_in(request.getfixturevalue(who)).get(PAGE).content.decode()

    assert "https://hooks.example.com" in page
    assert "receiver-secret" not in page and "/settle/in" not in page and "k=s3" not in page
    for label in ("Add endpoint", "Disable", "Rotate secret", "Send test"):
        assert f">{label}</button>" not in page


def test_administrators_see_the_whole_url_and_every_control(administrator):
    endpoint(supports="lookup", lookup_url="https://hooks.example.com/look/{delivery_id}?k=s3")

    page = logged_in(administrator).get(PAGE).content.decode()

    assert URL.replace("&", "&amp;") in page and "look/{delivery_id}?k=s3" in page
    for label in ("Add endpoint", "Disable", "Rotate secret", "Send test"):
        assert f">{label}</button>" in page


ACTIONS = [
    ("/console/deliveries/endpoints/add", {"name": "x", "url": URL, "supports": "none"}),
    ("/console/deliveries/endpoints/disable", {"name": "crm"}),
    ("/console/deliveries/endpoints/rotate", {"name": "crm"}),
    ("/console/deliveries/endpoints/test", {"name": "crm"}),
    ("/console/deliveries/0b5e3d0c-8a6f-4f0e-9a43-1c1b6a1f2e7d/resend", {}),
    ("/console/deliveries/0b5e3d0c-8a6f-4f0e-9a43-1c1b6a1f2e7d/mark-failed", {"reason": "r"}),
]


@pytest.mark.parametrize("who", ["moderator", "reader"])
@pytest.mark.parametrize("path, data", ACTIONS)
def test_only_administrators_act(request, who, path, data):
    endpoint()
    before = list(Endpoint.objects.values())

    response = logged_in(request.getfixturevalue(who)).post(path, data)

    assert response.status_code == 403
    assert list(Endpoint.objects.values()) == before
    assert audited("endpoint_add") and AuditEvent.objects.count() == 1  # the fixture's own


def test_every_role_reads_the_page(moderator, reader, administrator):
    for user in (moderator, reader, administrator):
        page = logged_in(user).get(PAGE)
        assert page.status_code == 200 and b"Unknown outcomes" in page.content


def test_an_unknown_delivery_action_is_not_a_page(administrator):
    response = logged_in(administrator).post(
        "/console/deliveries/0b5e3d0c-8a6f-4f0e-9a43-1c1b6a1f2e7d/explode", {}
    )
    assert response.status_code == 404


def test_an_action_on_a_delivery_that_does_not_exist_is_refused(administrator):
    response = logged_in(administrator).post(
        "/console/deliveries/0b5e3d0c-8a6f-4f0e-9a43-1c1b6a1f2e7d/cancel", {}, follow=True
    )

    assert "not changed: no delivery with id" in response.content.decode()
    assert AuditEvent.objects.count() == 0


def test_the_page_that_shows_a_new_secret_sends_actions_back_to_the_deliveries_page(
    administrator,
):
    response = add(logged_in(administrator))

    # Delivery actions on that page return to `here`: a GET page, never the POST's URL.
    assert response.context["here"] == PAGE
    assert logged_in(administrator).get(PAGE, {"state": "failed"}).context["here"] == (
        PAGE + "?state=failed"
    )


@pytest.mark.parametrize(
    "url, why",
    [
        ("https://hooks.example.com/a b", "must not hold a space"),
        ("https://hooks.example.com/a\x7fb", "must not hold a control character"),
        ("https://hooks.example.com/caf\u00e9", "must be ASCII outside its host"),
        ("https://hooks.example.com/in#top", "must not have a #fragment"),
        ("hooks.example.com/in", "must be absolute"),
    ],
)
def test_adding_an_unsendable_url_is_a_form_error(administrator, url, why):
    response = add(logged_in(administrator), url=url)

    assert response.status_code == 200
    assert why in response.content.decode()
    assert Endpoint.objects.count() == 0 and AuditEvent.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_send_test_to_a_stored_url_that_cannot_be_sent_says_so(administrator, settings):
    # given: a URL stored before the checks existed
    settings.SETTLE_DELIVERY_TIMEOUT = timedelta(seconds=1)
    endpoint("crm", allow_private=True, reason="receiver on loopback")
    Endpoint.objects.filter(name="crm").update(url="http://127.0.0.1:9/caf\u00e9 x")

    # when
    response = logged_in(administrator).post(
        "/console/deliveries/endpoints/test", {"name": "crm"}, follow=True
    )

    # then: an answer, not a 500, and the secret is nowhere on the page
    assert response.status_code == 200
    page = response.content.decode()
    assert "gave no answer (bad_url)" in page
    assert Endpoint.objects.get().secret not in page
