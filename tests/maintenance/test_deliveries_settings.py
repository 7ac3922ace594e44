"""The delivery settings come from the environment and fail loudly (SPEC 3 and 9)."""

from datetime import timedelta

import pytest

from tests.board.test_configuration import start_with


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SETTLE_DELIVERY_TIMEOUT", "ten seconds"),
        ("SETTLE_DELIVERY_DEADLINE", "0"),
        ("SETTLE_DELIVERY_SCHEDULE", ""),
        ("SETTLE_DELIVERY_SCHEDULE", "0,5s,soon"),
        ("SETTLE_DELIVERY_RETENTION", "-1d"),
        ("SETTLE_ENDPOINT_DISABLE_AFTER", "5 days"),
    ],
)
def test_it_refuses_to_start_with_a_bad_delivery_value_naming_the_variable(name, value):
    result = start_with(**{name: value})

    assert result.returncode != 0
    assert name in result.stderr


def test_the_defaults_are_the_contracts(settings):
    from board.serving.environment import env_duration_list

    assert env_duration_list("SETTLE_TEST_UNSET_SCHEDULE", "0,5s,5m,30m,2h,5h,10h") == [
        timedelta(0), timedelta(seconds=5), timedelta(minutes=5), timedelta(minutes=30),
        timedelta(hours=2), timedelta(hours=5), timedelta(hours=10),
    ]
