"""The operations page: a request_id looked up across scopes, and the unknown-outcome inbox."""


from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from moderation import selectors
from moderation.console.deliveries import inbox_context
from moderation.console.forms import (
    LookupForm,
)
from moderation.console.page import console, render_page


@require_GET
@console()
def operations(request: HttpRequest) -> HttpResponse:
    now = timezone.now()
    form = LookupForm(request.GET or None)
    found = None
    if form.is_valid():
        found = selectors.operation_lookup(request_id=form.cleaned_data["request_id"], now=now)
    return render_page(
        request,
        "moderation/operations.html",
        {
            "form": form,
            "found": found,
            **inbox_context(request, now=now, paged=True),
            "here": request.get_full_path(),
            "now": now,
        },
    )
