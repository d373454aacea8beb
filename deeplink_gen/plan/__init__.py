"""Decisions, with no text: resolved settings and one plan per artifact
that the templates under render/ spell out. The type translation the plans
build on (signatures, argument kinds, per-function conversions) is in
translate/."""
