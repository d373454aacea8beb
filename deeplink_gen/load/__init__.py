"""Files -> model. Reads YAML (with positions), checks each file against its
JSON Schema, and builds the model; reports shape errors only. Semantic
checks live in deeplink_gen.validate."""
