from tests.audit.conftest import fake  # noqa: F401  (the audit-aware fake provider)
