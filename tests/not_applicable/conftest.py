from tests.core.conftest import project  # noqa: F401  (fixtures shared with the core and judge tests)
from tests.judges.conftest import fake  # noqa: F401
