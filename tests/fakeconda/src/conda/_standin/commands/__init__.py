"""One module per conda subcommand."""
