"""What the board keeps and for how long (SPEC 8.1, 8.2): the retention `policies` in
force, `holds` on threads and principals, and `moments`, the operator's typed instants.
The purges that act on them are maintenance's."""
