"""The conformance vectors, shipped with the package as data (see README.md here)."""
