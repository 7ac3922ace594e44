from django.apps import AppConfig


class BoardConfig(AppConfig):
    name = "board"
    verbose_name = "Board"

    def ready(self) -> None:
        from board.serving import checks, logs  # noqa: F401 (registers the deployment checks)

        logs.connect_job_signals()
