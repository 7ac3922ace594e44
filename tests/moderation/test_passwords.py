"""Passwords pass Django's four validators with at least 12 characters (SPEC 7.1)."""

import pytest
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

from tests.moderation.conftest import logged_in

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "password",
    ["12345678", "short-pass", "123456789012345", "password1234", "operator2024!"],
    ids=["numeric-8", "eleven", "numeric-15", "common", "like-the-username"],
)
def test_it_refuses_weak_passwords(password, operator):
    with pytest.raises(ValidationError):
        validate_password(password, user=operator)


def test_it_accepts_a_long_unusual_password(operator):
    validate_password("plum-orbit-cactus-42", user=operator)


def test_the_admins_password_change_applies_the_validators(operator):
    admin = logged_in(operator)

    response = admin.post(
        f"/admin/auth/user/{operator.pk}/password/",
        {"password1": "12345678", "password2": "12345678"},
    )

    assert response.status_code == 200  # the form again, with the errors
    assert b"too short" in response.content and b"entirely numeric" in response.content
    operator.refresh_from_db()
    assert operator.check_password("operator-password")
