"""Local stand-ins for the services rubric-gate talks to: model providers (Anthropic, OpenAI,
their batch APIs) and GitHub, served over HTTP on 127.0.0.1 so the real SDKs and PyGithub run."""
