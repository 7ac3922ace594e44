"""What maintenance refuses, in one line an operator can read."""


class DeliveryRefused(Exception):
    """An endpoint or delivery action that does not apply; nothing was changed. The
    message is the command's; `console` says the same in the console's words where the
    command's names a flag."""

    def __init__(self, message: str, *, console: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.console = console or message
