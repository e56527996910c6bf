from tests.judges.conftest import fake  # noqa: F401  (the fake provider the judge tests use)
