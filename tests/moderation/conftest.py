"""Console personas: one operator per role, and a client logged in as each.

The groups come from a data migration, but transactional tests (the browser ones) flush
the database afterwards, so the fixtures make sure they exist.
"""

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from moderation.access.capabilities import ADMINISTRATORS, MODERATORS


def staff_user(django_user_model, username: str, *groups: str):
    user = django_user_model.objects.create_user(username, "", "secret-password", is_staff=True)
    for name in groups:
        user.groups.add(Group.objects.get_or_create(name=name)[0])
    return user


@pytest.fixture
def moderator(django_user_model):
    return staff_user(django_user_model, "mod", MODERATORS)


@pytest.fixture
def administrator(django_user_model):
    return staff_user(django_user_model, "admin", ADMINISTRATORS)


@pytest.fixture
def reader(django_user_model):
    """Staff in no group: sees every page, changes nothing."""
    return staff_user(django_user_model, "reader")


def logged_in(user, **kwargs) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


@pytest.fixture
def console(operator) -> Client:
    return logged_in(operator)


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """Hashing a password properly takes a good part of a second; tests need no such care."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
