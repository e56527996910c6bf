from tests.discover.conftest import example, fake  # noqa: F401  (the discover-aware provider, the bundled example)
