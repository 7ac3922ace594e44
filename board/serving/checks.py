"""Deployment checks of Settle's own settings (`manage.py check --deploy`)."""

from django.conf import settings
from django.core.checks import Tags, Warning, register


@register(Tags.security, deploy=True)
def https_reachable(app_configs, **kwargs) -> list[Warning]:
    """An https SETTLE_PUBLIC_URL needs a way for requests to be seen as https."""
    if settings.SETTLE_PUBLIC_URL.startswith("https://") and not settings.SETTLE_TRUSTED_PROXIES:
        return [Warning(
            "SETTLE_PUBLIC_URL is https but SETTLE_TRUSTED_PROXIES is empty: no request "
            "will be seen as https unless gunicorn itself holds the TLS certificate.",
            hint="Name the TLS proxy's address in SETTLE_TRUSTED_PROXIES.",
            id="settle.W001",
        )]
    return []
