"""Plan -> {path: text}, through the templates in deeplink_gen/templates/.
One module per artifact, each with the same entry point
``render(job, files) -> {path: text}`` (*files*: what the artifacts before
it rendered); render/artifacts.py runs them in order, and output paths are
defined in deeplink_gen/output_paths.py."""
