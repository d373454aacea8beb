"""Importers: migrate existing upstream configuration into a deeplink-gen workspace."""
