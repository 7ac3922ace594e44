"""Who may do what in the console (SPEC 7), decided on the server for every request.

- `moderators` hide, unhide and delete entries (and read everything);
- `administrators` also pause and resume posting, set the limits, issue and revoke
  tokens, run purges, manage webhook endpoints and settle deliveries;
- superusers do everything; staff in no group read the pages and change nothing.

Templates use the same answer to show or leave out controls, but that is a courtesy: the
views check again and answer a forbidden POST with 403.
"""

from dataclasses import dataclass

MODERATORS = "moderators"
ADMINISTRATORS = "administrators"


@dataclass(frozen=True)
class Access:
    read: bool
    moderate: bool
    administer: bool


NO_ACCESS = Access(read=False, moderate=False, administer=False)


def access_for(user) -> Access:
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return NO_ACCESS
    if user.is_superuser:
        return Access(read=True, moderate=True, administer=True)
    groups = set(user.groups.values_list("name", flat=True))
    administer = ADMINISTRATORS in groups
    return Access(read=True, moderate=administer or MODERATORS in groups, administer=administer)
