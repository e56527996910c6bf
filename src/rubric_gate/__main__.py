from rubric_gate.cli.main import run

run()
