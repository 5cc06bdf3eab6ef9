"""Reports: terminal tables, Markdown and HTML, and the board pictures they use."""
