"""Console forms: they check the shape of what an operator typed; the rules live in services."""

from django import forms

from board.models import Entry, Principal
from board.selectors import SEARCH_MIN
from maintenance.deliveries.models import NAME_LIMIT as ENDPOINT_NAME_LIMIT
from maintenance.deliveries.models import URL_LIMIT, Delivery, Endpoint
from moderation.selectors import VISIBILITIES

REASON_MAX = 500
# An agent's name, as long as its column allows.
AGENT_NAME_LIMIT = Principal._meta.get_field("name").max_length


# The largest value the database's positive integer column holds on every engine.
HOURLY_LIMIT_MAX = 2**31 - 1


class ReasonForm(forms.Form):
    """For actions whose reason is required: pause, resume, hide, unhide, delete."""

    reason = forms.CharField(label="Reason", max_length=REASON_MAX, strip=True)


class OptionalReasonForm(forms.Form):
    reason = forms.CharField(label="Reason", max_length=REASON_MAX, strip=True, required=False)


class LimitsForm(OptionalReasonForm):
    source_hourly_limit = forms.IntegerField(
        label="Per-source hourly limit", min_value=0, max_value=HOURLY_LIMIT_MAX, required=False,
        help_text="Write attempts an hour for one agent or address. Empty: the server default.",
    )
    overall_hourly_limit = forms.IntegerField(
        label="Overall hourly limit", min_value=0, max_value=HOURLY_LIMIT_MAX, required=False,
        help_text="New entries an hour, all sources together. Empty: the server default.",
    )
    field_order = ["source_hourly_limit", "overall_hourly_limit", "reason"]


class TokenIssueForm(forms.Form):
    name = forms.CharField(label="Agent name", max_length=AGENT_NAME_LIMIT, strip=True)
    hourly_limit = forms.IntegerField(
        label="Own hourly limit", min_value=0, max_value=HOURLY_LIMIT_MAX, required=False,
        help_text="Optional; wins over the console's per-source limit.",
    )


class TokenRevokeForm(OptionalReasonForm):
    name = forms.CharField(max_length=AGENT_NAME_LIMIT, widget=forms.HiddenInput)


class EntryFilterForm(forms.Form):
    q = forms.CharField(
        label="Search", required=False, max_length=200, min_length=SEARCH_MIN,
        error_messages={"min_length": f"Search needs at least {SEARCH_MIN} characters."},
    )
    type = forms.ChoiceField(
        label="Type", required=False, choices=[("", "any"), *Entry.Type.choices]
    )
    visibility = forms.ChoiceField(
        label="Visibility", required=False, choices=[("", "any"), *((v, v) for v in VISIBILITIES)]
    )
    # An exact name: (actor_name, id) serves it in the list's order.
    actor = forms.CharField(label="Actor (exact name)", required=False, max_length=80)
    created_from = forms.DateField(
        label="From (UTC)", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    created_to = forms.DateField(
        label="To (UTC)", required=False, widget=forms.DateInput(attrs={"type": "date"})
    )


class LookupForm(forms.Form):
    request_id = forms.UUIDField(label="request_id")


class AuditFilterForm(forms.Form):
    actor = forms.ChoiceField(label="Operator", required=False)
    action = forms.ChoiceField(label="Action", required=False)

    def __init__(self, *args, actors: list[str], actions: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["actor"].choices = [("", "any"), *((a, a) for a in actors)]
        self.fields["action"].choices = [("", "any"), *((a, a) for a in actions)]


class LoginUnlockForm(OptionalReasonForm):
    username = forms.CharField(max_length=150, strip=True, required=False)
    address = forms.GenericIPAddressField(required=False)

    def clean(self):
        cleaned = super().clean()
        if not (cleaned.get("username") or cleaned.get("address")):
            raise forms.ValidationError("name a username or an address to unlock")
        return cleaned


# --- Deliveries ----------------------------------------------------------------------------


class EndpointAddForm(forms.Form):
    """The shape only; maintenance.deliveries.endpoints.endpoint_add judges the URL and the rest."""

    name = forms.CharField(label="Name", max_length=ENDPOINT_NAME_LIMIT, strip=True)
    url = forms.CharField(
        label="URL", max_length=URL_LIMIT, strip=True,
        help_text="https; http only for an endpoint allowed private addresses.",
    )
    supports = forms.ChoiceField(
        label="Receiver supports", choices=Endpoint.Supports.choices, initial="none",
        help_text="What Settle may do after a send whose answer was lost.",
    )
    lookup_url = forms.CharField(
        label="Lookup URL", max_length=URL_LIMIT, strip=True, required=False,
        help_text="For lookup only: holds {delivery_id} once, in its path or query.",
    )
    allow_private = forms.BooleanField(label="Allow private addresses", required=False)
    reason = forms.CharField(
        label="Reason", max_length=REASON_MAX, strip=True, required=False,
        help_text="Required to allow private addresses.",
    )


class EndpointActionForm(OptionalReasonForm):
    name = forms.CharField(max_length=ENDPOINT_NAME_LIMIT, widget=forms.HiddenInput)


class DeliveryFilterForm(forms.Form):
    state = forms.ChoiceField(
        label="State", required=False, choices=[("", "any"), *Delivery.State.choices]
    )
    endpoint = forms.ChoiceField(label="Endpoint", required=False)

    def __init__(self, *args, endpoints: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["endpoint"].choices = [("", "any"), *((n, n) for n in endpoints)]
