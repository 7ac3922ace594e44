"""Where a text is stored: every column of every row of every model, for tests that claim
a secret is kept nowhere (SPEC 4: a token is stored only as a hash)."""

from django.apps import apps
from django.contrib.sessions.models import Session


def columns_holding(text: str) -> set[str]:
    """`app_label.Model.field` for each column where some row's value contains `text`.

    Session data is signed and compressed, so it is searched decoded (where flash
    messages, for one, would keep what a page showed).
    """
    found = set()
    for model in apps.get_models():
        names = [field.attname for field in model._meta.concrete_fields]
        for row in model._default_manager.values_list(*names):
            for name, value in zip(names, row, strict=True):
                if value is not None and text in str(value):
                    found.add(f"{model._meta.label}.{name}")
    for session in Session.objects.all():
        if text in str(session.get_decoded()):
            found.add("sessions.Session.session_data (decoded)")
    return found
