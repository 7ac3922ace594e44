"""Address safety: every resolved address must be public, and the connection goes to the
address that was vetted. Refusals are shown by a listening socket that sees no
connection, on the very port the URL names."""

import socket
import time

import pytest

from maintenance.deliveries import endpoints, sweep, webhooks
from maintenance.deliveries.models import DeliveryAttempt
from tests.maintenance.conftest import delivery_of, drive, post_entry
from tests.maintenance.webhook_receiver import Listener


def _request(url: str, *, allow_private: bool = False, resolve=socket.getaddrinfo):
    return webhooks.request(
        method="POST", url=url, headers={}, body=b"{}", timeout=1.0,
        allow_private=allow_private, resolve=resolve,
    )


@pytest.fixture
def listener():
    sock = Listener("127.0.0.1")
    yield sock
    sock.close()


@pytest.fixture
def listener6():
    try:
        sock = Listener("::1", family=socket.AF_INET6)
    except OSError:
        pytest.skip("this machine has no IPv6 loopback")
    yield sock
    sock.close()


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1", "10.0.0.5", "169.254.169.254", "::1", "::ffff:127.0.0.1", "100.64.0.1",
        "192.168.1.1", "172.16.0.1", "0.0.0.0", "224.0.0.1", "240.0.0.1", "192.0.2.10",
        "198.51.100.7", "203.0.113.9", "198.18.0.1", "fc00::1", "fd12:3456::1", "fe80::1",
        "ff02::1", "::", "64:ff9b::7f00:1", "64:ff9b::808:808", "2002:7f00:1::1",
        "2001:db8::1", "::ffff:10.0.0.5", "::127.0.0.1",
    ],
)
def test_it_refuses_a_non_public_address(address):
    assert webhooks.address_is_public(address) is False


@pytest.mark.parametrize(
    "address",
    [
        # IPv4-translated (::ffff:0:a.b.c.d), even of a public IPv4 address
        "::ffff:0:808:808", "::ffff:0:7f00:1", "::ffff:0:0:0",
        # documentation, RFC 9637
        "3fff::1", "3fff:fff:ffff::1",
        # SRv6 segment identifiers
        "5f00::1", "5f00:ffff::1",
    ],
)
def test_it_refuses_the_ranges_ipaddress_calls_global(address):
    assert webhooks.address_is_public(address) is False


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "3fff:1000::1", "5f01::1"]
)
def test_it_accepts_a_public_address(address):
    assert webhooks.address_is_public(address) is True


def test_it_refuses_127_0_0_1_without_connecting(listener):
    answer = _request(f"http://127.0.0.1:{listener.port}/hook")

    assert (answer.error, answer.request_left, answer.status_code) == (
        "address_refused", False, None
    )
    assert listener.accepted == 0


def test_it_refuses_a_name_resolving_to_loopback_without_connecting(listener):
    answer = _request(f"http://localhost:{listener.port}/hook")

    assert answer.error == "address_refused"
    assert listener.accepted == 0


def test_it_refuses_ipv6_loopback_without_connecting(listener6):
    answer = _request(f"http://[::1]:{listener6.port}/hook")

    assert answer.error == "address_refused"
    assert listener6.accepted == 0


def test_it_refuses_an_ipv4_mapped_loopback_without_connecting(listener):
    answer = _request(f"http://[::ffff:127.0.0.1]:{listener.port}/hook")

    assert answer.error == "address_refused"
    assert listener.accepted == 0


@pytest.mark.parametrize("host", ["10.0.0.5", "169.254.169.254"])
def test_it_refuses_private_and_metadata_addresses_before_any_connect(host):
    # Nothing listens there on this machine; a connect would be a connect_* error.
    answer = _request(f"https://{host}/hook")

    assert (answer.error, answer.request_left) == ("address_refused", False)
    assert answer.duration_ms < 500


def test_one_private_address_among_public_ones_refuses_the_attempt(listener):
    # requests-hardened vets only the first answer; SPEC 9 asks for every one.
    def resolve(host, port, **kwargs):
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
        ]

    answer = _request(f"http://hooks.example:{listener.port}/hook", resolve=resolve)

    assert answer.error == "address_refused"
    assert listener.accepted == 0


def test_it_connects_to_the_address_it_vetted_not_a_second_answer(listener):
    # A rebinding DNS server: public on the first question, loopback afterwards. The
    # sender asks once and connects to that answer, so the loopback service is never
    # reached. What the public address does is the network's: a connect error, or an
    # answer where the machine's outbound traffic goes through a proxy that answers for it.
    asked = []
    public = ["93.184.216.34"]

    def rebinding(host, port, **kwargs):
        address = public.pop() if public else "127.0.0.1"
        asked.append(address)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    answer = _request(f"http://rebind.example:{listener.port}/hook", resolve=rebinding)

    assert asked == ["93.184.216.34"]  # resolved once per attempt
    assert answer.error != "address_refused"  # vetted, and tried
    assert listener.accepted == 0


def test_allow_private_lifts_the_rule_for_that_endpoint_only(listener):
    answer = _request(f"http://127.0.0.1:{listener.port}/hook", allow_private=True)

    # then: it connected (the listener closes at once, so no answer came)
    assert listener.accepted == 1
    assert answer.status_code is None and answer.error != "address_refused"


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("delivery_settings")
def test_a_delivery_to_a_loopback_endpoint_without_the_allowance_is_never_sent(listener):
    # given: an endpoint whose name resolves to loopback, not allowed private addresses
    endpoint, _ = endpoints.endpoint_add(
        name="sneaky", url=f"https://localhost:{listener.port}/hook", supports="dedupe"
    )
    entry = post_entry()

    # when: every attempt of the schedule runs
    delivery = drive(delivery_of(entry, endpoint))

    # then: refused before leaving, each time: failed, never unknown, nothing connected
    assert delivery.state == "failed" and not delivery.unanswered
    attempts = DeliveryAttempt.objects.filter(delivery=delivery)
    assert [(a.error, a.request_left, a.status_code) for a in attempts] == [
        ("address_refused", False, None)
    ] * 3
    assert listener.accepted == 0
    assert sweep.delivery_run(delivery_id=delivery.pk).state == "failed"


@pytest.mark.django_db
@pytest.mark.usefixtures("delivery_settings")
@pytest.mark.parametrize(
    ("url", "extra", "message"),
    [
        ("http://hooks.example/x", {}, "must use https"),
        ("https://user:pw@hooks.example/x", {}, "user name"),
        ("ftp://hooks.example/x", {}, "https URL"),
        ("https://hooks.example/x", {"supports": "lookup"}, "needs a lookup URL"),
        ("https://hooks.example/x",
         {"supports": "lookup", "lookup_url": "https://hooks.example/l"}, "exactly once"),
        ("https://hooks.example/x",
         {"supports": "lookup", "lookup_url": "https://{delivery_id}.example/l"},
         "path or query"),
        ("https://hooks.example/x",
         {"supports": "lookup", "lookup_url": "https://h.example/{delivery_id}/{delivery_id}"},
         "exactly once"),
        ("http://10.0.0.5/x", {"allow_private": True}, "reason is required"),
    ],
)
def test_endpoint_add_refuses_bad_urls_and_changes_nothing(url, extra, message):
    from maintenance.deliveries.models import Endpoint
    from maintenance.exceptions import DeliveryRefused

    with pytest.raises(DeliveryRefused, match=message):
        endpoints.endpoint_add(name="bad", url=url, **extra)
    assert Endpoint.objects.count() == 0


def test_a_resolver_that_never_answers_is_cut_at_the_timeout():
    def stuck(host, port, **kwargs):
        time.sleep(5)
        return []

    answer = _request("https://slow-dns.example/hook", resolve=stuck)

    assert (answer.error, answer.request_left) == ("dns_timeout", False)
    assert answer.duration_ms < 1500
