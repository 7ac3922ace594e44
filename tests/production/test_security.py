"""Security for a real deployment (SPEC 12): Settle decides https itself, an https public
URL brings secure cookies and HSTS, and `check --deploy` passes with production values."""

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
from ipaddress import ip_network

import pytest
from django.core.management import call_command
from django.templatetags.static import static

from tests.conftest import question
from tests.production.conftest import ROOT, call

PROXY = "10.0.0.1"
PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "ALLOWED_HOSTS": "settle.example.org",
    "SETTLE_PUBLIC_URL": "https://settle.example.org",
    "SETTLE_TRUSTED_PROXIES": PROXY,
}


def manage(*args: str, env: dict) -> subprocess.CompletedProcess:
    # Only what a shell needs: the test run's own variables (DEBUG, a browser test's
    # DJANGO_ALLOW_ASYNC_UNSAFE) are not the deployment's.
    clean = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT,
                          env={**clean, **env}, capture_output=True, text=True, timeout=120)


# --- check --deploy ------------------------------------------------------------------------


def test_check_deploy_passes_with_the_production_variables():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues (3 silenced)" in result.stdout


def test_only_the_operators_three_checks_are_silenced(settings):
    assert sorted(settings.SILENCED_SYSTEM_CHECKS) == [
        "security.W005", "security.W008", "security.W021"]


def test_check_deploy_fails_an_https_url_that_no_request_can_reach():
    result = manage("check", "--deploy", "--fail-level", "WARNING",
                    env={**PRODUCTION, "SETTLE_TRUSTED_PROXIES": ""})

    assert result.returncode != 0
    assert "settle.W001" in result.stdout + result.stderr


def test_testserver_is_not_an_allowed_host_outside_tests():
    result = manage("shell", "-c", "from django.conf import settings; "
                    "print(','.join(settings.ALLOWED_HOSTS))", env={"DEBUG": "true"})

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "localhost,127.0.0.1,[::1]"


# --- Who says https ------------------------------------------------------------------------


def post_url(client, **meta) -> str:
    response = client.post("/api/v1/entries", data=json.dumps(question()),
                           content_type="application/json", HTTP_HOST="testserver", **meta)
    assert response.status_code == 201, response.content
    return response.json()["url"]


@pytest.mark.django_db
def test_a_trusted_proxy_saying_https_makes_absolute_urls_https(client, settings):
    settings.SETTLE_TRUSTED_PROXIES = [ip_network(f"{PROXY}/32")]
    settings.SETTLE_PUBLIC_URL = ""

    url = post_url(client, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_PROTO="https")

    assert url.startswith("https://testserver/threads/")


@pytest.mark.django_db
def test_anyone_else_saying_https_is_ignored(client, settings):
    settings.SETTLE_TRUSTED_PROXIES = [ip_network(f"{PROXY}/32")]
    settings.SETTLE_PUBLIC_URL = ""

    url = post_url(client, REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_PROTO="https")

    assert url.startswith("http://testserver/threads/")


@pytest.mark.django_db
def test_the_proxys_own_word_counts_not_the_clients(client, settings):
    # A proxy that appends keeps the client's claim on the left and its own on the right.
    settings.SETTLE_TRUSTED_PROXIES = [ip_network(f"{PROXY}/32")]
    settings.SETTLE_PUBLIC_URL = ""

    url = post_url(client, REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_PROTO="https, http")

    assert url.startswith("http://")


@pytest.mark.django_db(transaction=True)
def test_settle_ignores_what_gunicorn_believes_from_loopback(serve):
    # Gunicorn without deploy/'s file believes X-Forwarded-Proto from 127.0.0.1 (its
    # default forwarded_allow_ips); SETTLE_TRUSTED_PROXIES is empty, so Settle does not.
    served = serve(config=False, SETTLE_TRUSTED_PROXIES="", FORWARDED_ALLOW_IPS="127.0.0.1")

    status, _, body = call(served.base, "/api/v1/entries", method="POST", body=question(),
                           headers={"X-Forwarded-Proto": "https"})

    assert status == 201
    assert json.loads(body)["url"].startswith("http://127.0.0.1:")


@pytest.mark.django_db(transaction=True)
def test_the_production_config_believes_the_named_proxy(serve):
    served = serve(SETTLE_TRUSTED_PROXIES="127.0.0.1")

    status, _, body = call(served.base, "/api/v1/entries", method="POST", body=question(),
                           headers={"X-Forwarded-Proto": "https"})

    assert status == 201
    assert json.loads(body)["url"].startswith("https://127.0.0.1:")


def self_signed_certificate(folder) -> tuple[str, str]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )
    return str(cert), str(key)


@pytest.mark.django_db(transaction=True)
def test_a_request_over_tls_is_https_without_any_proxy(serve, tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate (apt-get install openssl)")
    cert, key = self_signed_certificate(tmp_path)
    served = serve(scheme="https", SETTLE_TRUSTED_PROXIES="", SETTLE_PUBLIC_URL="",
                   GUNICORN_CMD_ARGS=f"--certfile {cert} --keyfile {key}")

    # A client's claim of plain http changes nothing: the socket is TLS.
    status, _, body = call(served.base, "/api/v1/entries", method="POST",
                           body=question(), headers={"X-Forwarded-Proto": "http"})

    assert status == 201
    assert json.loads(body)["url"].startswith("https://127.0.0.1:")


# --- Cookies and HSTS ----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_an_https_public_url_brings_secure_cookies_and_hsts(serve):
    served = serve(SETTLE_PUBLIC_URL="https://settle.example.org",
                   SETTLE_TRUSTED_PROXIES="127.0.0.1")

    status, headers, _ = call(served.base, "/console/login/",
                              headers={"X-Forwarded-Proto": "https"})

    assert status == 200
    assert headers["Strict-Transport-Security"] == "max-age=31536000"
    assert re.search(r"csrftoken=[^;]+;.*\bSecure\b", headers["Set-Cookie"])


@pytest.mark.django_db(transaction=True)
def test_a_plain_deployment_sends_neither(serve):
    served = serve(SETTLE_PUBLIC_URL="")

    status, headers, _ = call(served.base, "/console/login/",
                              headers={"X-Forwarded-Proto": "https"})

    assert status == 200
    assert "Strict-Transport-Security" not in headers
    assert "Secure" not in headers["Set-Cookie"]


def test_a_configuration_that_cannot_work_is_said_in_one_line_at_start(serve):
    served = serve(SETTLE_PUBLIC_URL="https://settle.example.org", SETTLE_TRUSTED_PROXIES="")
    served.stop()

    said = [line for line in served.lines() if "SETTLE_PUBLIC_URL" in line["message"]]

    assert len(said) == 1
    assert said[0]["level"] == "WARNING"


# --- Static files --------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_static_files_are_served_without_collectstatic(serve):
    served = serve()
    _, _, page = call(served.base, "/threads/")
    stylesheet = re.search(r'href="(/static/[^"]+\.css)"', page.decode())[1]

    status, headers, _ = call(served.base, stylesheet)

    assert status == 200
    assert headers["Content-Type"].startswith("text/css")


def test_collected_static_files_get_hashed_names(settings, tmp_path):
    settings.STATIC_ROOT = tmp_path

    call_command("collectstatic", "--noinput", verbosity=0)

    assert re.fullmatch(r"/static/settle\.[0-9a-f]{12}\.css", static("settle.css"))
    assert list(tmp_path.glob("settle.*.css.gz"))
