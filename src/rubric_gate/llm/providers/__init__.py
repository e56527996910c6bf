"""One module per provider, each defining `live_client(model)` and `batch_client(model)`;
`rubric_gate.llm.registry` names them and imports one only when its client is made."""
