"""Parsers of test-run output: what a test framework reported, per test and in total."""
