"""A gated rubric used where teams already grade: an inspect_ai scorer
(`rubric_gate.integrations.inspect_ai`, extra `inspect`), a DeepEval metric
(`rubric_gate.integrations.deepeval`, extra `deepeval`), both built on `checklist`, which asks
each check with rubric-gate's per-check prompt and can append the answers to the rubric's
verdict store."""
