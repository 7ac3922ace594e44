from django.apps import AppConfig


class MaintenanceConfig(AppConfig):
    name = "maintenance"
    verbose_name = "Maintenance"

    def ready(self) -> None:
        # The outbox is written inside the entry's own transaction: board sends these
        # signals there without importing maintenance (dependencies point one way).
        # The delivery tasks are imported too: the doorbell sends them by name, and a
        # registered task applies SettleTask's countdown check in this process as well.
        from board.entries import signals
        from maintenance.deliveries import outbox, tasks  # noqa: F401 (tasks registers)

        signals.entry_companions.connect(outbox.outbox_companion, dispatch_uid="outbox-created")
        signals.entry_deleted.connect(outbox.on_entry_deleted, dispatch_uid="outbox-deleted")
        signals.entries_deleted.connect(
            outbox.on_entries_deleted, dispatch_uid="outbox-entries-deleted"
        )
