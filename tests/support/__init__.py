"""Test helpers that are not fakes: small rubric projects on disk or in git, Markdown as GitHub
renders it."""
