"""The operator console (SPEC 7): one views module a page (`dashboard`, `posting`,
`entries`, `operations`, `deliveries`, `retention`, `tokens` with `erasure`, `audit`), what
they share (`page`), their `forms` and `charts`. Who gets in is moderation.access."""
