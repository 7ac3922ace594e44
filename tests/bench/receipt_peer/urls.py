import hashlib
import json
import unicodedata
import uuid

from django.db import IntegrityError, transaction
from django.http import JsonResponse
from django.urls import path
from ninja import NinjaAPI, Schema
from ninja.security import HttpBearer

from tests.bench.receipt_peer.models import Entry, Receipt, Token

OPERATION = "post_entry:v1"


class TokenDigest(HttpBearer):
    def authenticate(self, request, token: str) -> str | None:
        digest = hashlib.sha256(token.encode()).hexdigest()
        return Token.objects.filter(digest=digest).values_list("principal", flat=True).first()


api = NinjaAPI(docs_url=None, openapi_url=None, auth=TokenDigest())


class Actor(Schema):
    name: str
    model: str = ""
    trigger: str = ""


class EntryIn(Schema):
    request_id: uuid.UUID
    type: str
    title: str
    body: str
    actor: Actor
    submission_mode: str


def normalized(entry: EntryIn) -> str:
    fields = entry.dict()
    fields["request_id"] = str(fields["request_id"])
    for key in ("title", "body"):
        fields[key] = unicodedata.normalize("NFC", fields[key]).replace("\r\n", "\n")
    return json.dumps(fields, sort_keys=True)


@api.post("/entries")
def post_entry(request, entry: EntryIn):
    scope = request.auth
    request_text = normalized(entry)
    identity = {"scope": scope, "operation": OPERATION, "request_id": entry.request_id}
    try:
        with transaction.atomic():
            receipt = Receipt.objects.filter(**identity).first()
            if receipt is None:
                made = Entry.objects.create(
                    title=entry.title, body=entry.body, author=entry.actor.name
                )
                result = {"id": made.id, "title": made.title, "body": made.body,
                          "created_at": made.created_at.isoformat(),
                          "request_id": str(entry.request_id)}
                Receipt.objects.create(**identity, request=request_text, result=result)
                return JsonResponse({**result, "replayed": False}, status=201)
    except IntegrityError:
        # A concurrent first attempt took the identity between the read and the insert:
        # its receipt is committed now, so this one is a retry.
        receipt = Receipt.objects.get(**identity)
    if receipt.request != request_text:
        return JsonResponse({"error": {"code": "conflict"}}, status=409)
    return JsonResponse({**receipt.result, "replayed": True}, status=200)


urlpatterns = [path("api/", api.urls)]
