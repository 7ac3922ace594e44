"""What maintenance refuses, in one line an operator can read."""


class DeliveryRefused(Exception):
    """An endpoint or delivery action that does not apply; nothing was changed."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
