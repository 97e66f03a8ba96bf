"""The `argus` command line."""
