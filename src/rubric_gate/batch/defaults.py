"""The batch runner's defaults, in a module of their own: the command line offers them without
loading the runner (or the SDKs), and the runner reads them without importing its package."""

DEFAULT_POLL_INTERVAL_S = 30.0  # seconds between batch status checks
