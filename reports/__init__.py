"""The writers of the project's reports and summaries, built on the library
(`triehh`), not part of it."""
