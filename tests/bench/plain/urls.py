from django.urls import path
from ninja import NinjaAPI, Schema

from tests.bench.plain.models import Row

api = NinjaAPI(docs_url=None, openapi_url=None)


class RowIn(Schema):
    name: str
    body: str


class RowOut(Schema):
    id: int


@api.get("/ping")
def ping(request):
    return {"ping": "pong"}


@api.post("/insert", response={201: RowOut})
def insert(request, row: RowIn):
    return 201, Row.objects.create(name=row.name, body=row.body)


urlpatterns = [path("api/", api.urls)]
