"""Importing a DIPU vendor's hand-written runtime folder (folder.py)."""
