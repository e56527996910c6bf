from tests.ensemble.conftest import fake, project  # noqa: F401  (the ensemble tests' fruit project and provider)
