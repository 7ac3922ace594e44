"""Who gets into the console and the admin (SPEC 7.1): the groups' `capabilities`, the
`login` pages, throttled failures (`throttling`), the second factor (`two_factor`) and the
console session's limits (`sessions`)."""
