"""What every console page shares (SPEC 7): the `console` decorator that checks access
for each view, the page render with the caller's access, and a form's errors in one line.
Views translate: they check access, read a form, call one service or selector and answer
with a page or a redirect and a message. The rules (who may, what is audited, what a
deletion removes) live in `moderation.actions`, `moderation.access` and the owning apps.
A view that answers a form is named for its page (`tokens_page_issue`), so one grep for an
action's name (`token_issue`) finds the owning service and its audited wrapper, not views."""

from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from moderation.access.capabilities import access_for

PAGE_SIZE = 50

def console(capability: str = "read"):
    """Staff only; `capability` (read, moderate, administer) decides who may call the view.

    Anyone not logged in as staff is sent to the login page; staff without the capability
    get 403. Console pages are never cached: they show tokens and moderation state.
    """

    def decorate(view):
        @wraps(view)
        @never_cache
        def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            access = access_for(request.user)
            if not access.read:
                return redirect_to_login(request.get_full_path(), settings.LOGIN_URL)
            if not getattr(access, capability):
                raise PermissionDenied(f"your account may not {capability} in the console")
            request.console_access = access
            return view(request, *args, **kwargs)

        return wrapped

    return decorate


def operator_name(request: HttpRequest) -> str:
    return request.user.get_username()


def render_page(
    request: HttpRequest, template: str, context: dict, status: int = 200
) -> HttpResponse:
    return render(
        request, template, {"access": request.console_access, **context}, status=status
    )


def form_errors(form) -> str:
    return "; ".join(
        f"{form.fields[name].label or name}: {' '.join(errors)}" if name in form.fields
        else " ".join(errors)
        for name, errors in form.errors.items()
    )
