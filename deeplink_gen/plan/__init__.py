"""Type translation and decisions, with no text: resolved settings, wrapper
signatures and argument kinds (through torchgen), and one plan per artifact
that the templates under render/ spell out."""
