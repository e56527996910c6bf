import sys

from rubric_gate.cli.main import main

sys.exit(main())
