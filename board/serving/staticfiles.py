"""Static file names with a content hash, and plain names when nothing was collected.

`collectstatic` (run by `make run` and by a deploy) writes hashed, compressed copies and
a manifest; whitenoise then serves them with a year's caching. Development and tests do
not collect: there a name missing from the manifest keeps its plain form, and whitenoise
finds the file in the apps (WHITENOISE_USE_FINDERS), so no page breaks for want of it.
"""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class HashedStaticFilesStorage(CompressedManifestStaticFilesStorage):
    def stored_name(self, name: str) -> str:
        try:
            return super().stored_name(name)
        except ValueError:  # not in the manifest: nothing was collected, or not this file
            return name
