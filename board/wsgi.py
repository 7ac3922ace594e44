import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

from board.serving.chunked import ChunkedBodyMiddleware
from board.serving.environment import settings_or_exit
from board.serving.metrics_folder import folder_for_this_server

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "board.settings")
# Before anything imports prometheus-client: counts add up across worker processes however
# the server was started (board/serving/metrics_folder.py).
folder_for_this_server()
# Exit status 3 is gunicorn's "worker failed to boot": the master stops instead of
# starting worker after worker into the same configuration error.
settings_or_exit(exit_code=3)
application = ChunkedBodyMiddleware(
    get_wsgi_application(), limit=settings.DATA_UPLOAD_MAX_MEMORY_SIZE
)
