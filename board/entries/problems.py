"""Reading a request's object with a pydantic class, its refusals in SPEC 5's words.

Each rule that is a plain validator raises `field_problem` with SPEC's wording; pydantic's
own refusals (an unknown key, a missing field, a choice, an object) are worded here, by
`validation_problems`, into `error.fields`: each field once, in a fixed order.
"""

from typing import TypeVar, get_args

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from board.exceptions import InvalidRequest


def field_problem(said: str) -> PydanticCustomError:
    """A rule's refusal, worded as SPEC's `error.fields[].problem`."""
    return PydanticCustomError("problem", said)


Read = TypeVar("Read", bound=BaseModel)


def model_read(
    model: type[Read], data: dict, order: list[str], *, nested: tuple[str, ...] = ()
) -> Read:
    """`data` read by `model`, or InvalidRequest listing its problems (`validation_problems`).
    A key holding a lone surrogate, which pydantic cannot read as a name, is taken out
    first and refused as the unknown field it is (no field's name holds one), at the top
    or inside an object field named in `nested`."""
    unreadable: list[tuple[str, ...]] = []
    try:
        "".join(data).encode("utf-8")
        for name in nested:
            if isinstance(data.get(name), dict):
                "".join(data[name]).encode("utf-8")
    except UnicodeEncodeError:
        data = _readable_keys(data, (), unreadable)
        for name in nested:
            if isinstance(data.get(name), dict):
                data = {**data, name: _readable_keys(data[name], (name,), unreadable)}
    try:
        read = model.model_validate(data)
    except ValidationError as error:
        raise InvalidRequest(validation_problems(model, error, order, unreadable)) from None
    if unreadable:
        raise InvalidRequest(validation_problems(model, None, order, unreadable))
    return read


def _readable_keys(data: dict, at: tuple[str, ...], unreadable: list) -> dict:
    # One pass, each key judged once: a body may hold tens of thousands of such keys,
    # and looking each up in a list of the others made the check quadratic (SPEC 11.6).
    readable = {}
    for key, value in data.items():
        if _encodable(key):
            readable[key] = value
        else:
            unreadable.append((*at, key))
    return readable


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def validation_problems(
    model: type[BaseModel], error: ValidationError | None, order: list[str],
    unknown: list[tuple[str, ...]] = (),
) -> list[dict[str, str]]:
    """pydantic's errors, and the `unknown` keys taken out before it read them, as SPEC
    5's `error.fields`: each field once, by its dotted name, unknown keys first (sorted,
    an object's before its own fields), then the fields in `order`."""
    items = error.errors(include_url=False, include_context=False) if error is not None else []
    items = [*items, *({"type": "extra_forbidden", "loc": loc} for loc in unknown)]
    problems: dict[str, tuple[tuple, str]] = {}
    for item in items:
        loc = [str(part) for part in item["loc"]]
        name = ".".join(loc)
        unknown_key = item["type"] == "extra_forbidden"
        if item["type"] == "model_type":  # an object field given something else
            said = "required" if item.get("input") is None else "must be an object"
        elif item["type"] == "literal_error":  # a field of choices (`_choice`)
            choices = ", ".join(get_args(model.model_fields[loc[0]].annotation))
            said = "required" if item.get("input") is None else "must be one of " + choices
        else:
            said = {"extra_forbidden": "unknown field", "missing": "required"}.get(
                item["type"], item.get("msg")
            )
        top = order.index(loc[0]) if loc and loc[0] in order else -1
        key = (top, 0 if unknown_key else 1, name if unknown_key else "", len(problems))
        problems.setdefault(name, (key, said))
    return [
        {"field": name, "problem": said}
        for name, (_, said) in sorted(problems.items(), key=lambda item: item[1][0])
    ]
