"""The validator: pure checks that return findings, a CLI and reports for a pull request."""
