"""The commands behind the CLI, each on top of deeplink_gen.pipeline."""
