"""The embedded broker (`filesystem://`, SPEC 12's development broker): kombu's filesystem
transport, with each message file made whole before a consumer can see it.

kombu writes a message by creating its file in the folder consumers list and then writing
it, so a worker polling that folder can take a file whose writer has not written it yet:
it reads nothing, fails to decode it, and stops with "Unrecoverable error". Here a message
is written under a name no consumer takes and then renamed into place; a rename within one
folder is atomic, so a consumer finds the whole message or none of it.
"""

import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: dict, **kwargs: object) -> None:
        # kombu's own name, so consumers take messages in the order they always did.
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        # A leading dot: a consumer takes only names whose text after the first dot is
        # "<its queue>.msg", which this one's is not.
        partial = os.path.join(self.data_folder_out, f".{name}.part")
        try:
            with open(partial, "wb") as message:
                message.write(dumps(payload).encode())
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel
