"""Tests of nerve.language (SPEC LG-1..LG-3)."""
