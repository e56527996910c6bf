"""Talking to GitHub: the client, the facts a decision depends on (the base tip, other runs of the
same head, the override label and who applied it), and what the run posts (the sticky comment,
the check run, the step outputs and job summary)."""
