"""deeplink-gen: render DIPU/DIOPI vendor artifacts from validated YAML."""

__version__ = "0.1.0"
