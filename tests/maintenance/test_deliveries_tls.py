"""TLS (SPEC 9): the chain and the URL's host name are verified against the system's
authorities plus SETTLE_DELIVERY_CA_FILE's, and a refusal says which of three it was.

The receiver is a real https server on 127.0.0.1 with a private CA made here."""

import ssl
from datetime import UTC, datetime, timedelta
from ipaddress import IPv4Address

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from maintenance.deliveries import endpoints
from maintenance.deliveries.models import DeliveryAttempt
from tests.maintenance.conftest import delivery_of, drive, post_entry
from tests.maintenance.webhook_receiver import Receiver

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("delivery_settings"),
]


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


class PrivateCA:
    def __init__(self, directory):
        self.directory = directory
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.now(UTC)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(_name("Settle test CA")).issuer_name(_name("Settle test CA"))
            .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1)).not_valid_after(now + timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            # Key identifiers, as a real CA's carry: Python 3.13's default context verifies
            # with X509_STRICT, which refuses a chain without them.
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(self.key.public_key()), critical=False
            )
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True, key_cert_sign=True, crl_sign=True,
                    content_commitment=False, key_encipherment=False, data_encipherment=False,
                    key_agreement=False, encipher_only=False, decipher_only=False,
                ),
                critical=True,
            )
            .sign(self.key, hashes.SHA256())
        )
        self.pem = directory / "ca.pem"
        self.pem.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))

    def server_context(self, *, names: list, expired: bool = False) -> ssl.SSLContext:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.now(UTC)
        start, end = (now - timedelta(days=3), now - timedelta(days=2)) if expired else (
            now - timedelta(hours=1), now + timedelta(days=1)
        )
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name("receiver")).issuer_name(self.cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(end)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(self.key.public_key()),
                critical=False,
            )
            .add_extension(
                x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False
            )
            .sign(self.key, hashes.SHA256())
        )
        cert_file, key_file = self.directory / "leaf.pem", self.directory / "leaf.key"
        cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_file.write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_file, key_file)
        return context


LOOPBACK = [x509.IPAddress(IPv4Address("127.0.0.1"))]


@pytest.fixture
def ca(tmp_path):
    return PrivateCA(tmp_path)


@pytest.fixture
def https_receiver():
    made = []

    def make(context: ssl.SSLContext) -> Receiver:
        server = Receiver(hang_seconds=2.5)
        # Same file descriptor, so the running serve loop now accepts TLS connections.
        server.server.socket = context.wrap_socket(server.server.socket, server_side=True)
        made.append(server)
        return server

    yield make
    for server in made:
        server.close()


def deliver_to(server: Receiver, *, host: str = "127.0.0.1"):
    _, secret = endpoints.endpoint_add(
        name="tls", url=f"https://{host}:{server.port}/hooks", supports="dedupe",
        allow_private=True, private_reason="the test receiver runs on loopback",
    )
    server.secrets.append(secret)
    delivery = drive(delivery_of(post_entry()))
    return delivery, list(DeliveryAttempt.objects.filter(delivery=delivery))


def test_a_private_ca_is_untrusted_without_the_ca_file(ca, https_receiver):
    server = https_receiver(ca.server_context(names=LOOPBACK))

    delivery, attempts = deliver_to(server)

    assert delivery.state == "failed"  # refused before leaving: never "may have landed"
    assert {(a.error, a.request_left) for a in attempts} == {("tls_untrusted", False)}
    assert server.posts() == []


def test_a_private_ca_in_the_ca_file_is_trusted(ca, https_receiver, settings):
    settings.SETTLE_DELIVERY_CA_FILE = str(ca.pem)
    server = https_receiver(ca.server_context(names=LOOPBACK))

    delivery, attempts = deliver_to(server)

    assert delivery.state == "succeeded"
    assert [(a.status_code, a.error) for a in attempts] == [(200, "")]
    assert len(server.posts()) == 1


def test_a_certificate_for_another_host_is_a_name_mismatch(ca, https_receiver, settings):
    settings.SETTLE_DELIVERY_CA_FILE = str(ca.pem)
    server = https_receiver(ca.server_context(names=[x509.DNSName("other.example")]))

    delivery, attempts = deliver_to(server)

    assert delivery.state == "failed"
    assert {(a.error, a.request_left) for a in attempts} == {("tls_name_mismatch", False)}


def test_a_certificate_for_localhost_matches_a_localhost_url(ca, https_receiver, settings):
    settings.SETTLE_DELIVERY_CA_FILE = str(ca.pem)
    server = https_receiver(ca.server_context(names=[x509.DNSName("localhost")]))

    delivery, attempts = deliver_to(server, host="localhost")

    assert delivery.state == "succeeded"


def test_an_expired_certificate_is_untrusted(ca, https_receiver, settings):
    settings.SETTLE_DELIVERY_CA_FILE = str(ca.pem)
    server = https_receiver(ca.server_context(names=LOOPBACK, expired=True))

    delivery, attempts = deliver_to(server)

    assert {a.error for a in attempts} == {"tls_untrusted"}


def test_a_server_that_does_not_speak_tls_is_a_handshake_failure(settings):
    server = Receiver()  # plain http on an https URL
    try:
        delivery, attempts = deliver_to(server)
    finally:
        server.close()

    assert {(a.error, a.request_left) for a in attempts} == {("tls_handshake", False)}
