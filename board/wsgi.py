import os

from django.core.wsgi import get_wsgi_application

from board.environment import settings_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "board.settings")
# Exit status 3 is gunicorn's "worker failed to boot": the master stops instead of
# starting worker after worker into the same configuration error.
settings_or_exit(exit_code=3)
application = get_wsgi_application()
