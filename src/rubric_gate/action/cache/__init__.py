"""The verdict cache: what the configured judge answered, kept between runs; the base branch's
cache and where it came from (a push run's artifact, never a PR-scoped restore); warming it on a
push to the base branch."""
