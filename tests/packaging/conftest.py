"""site_files/ is the project the packaging tests build, tests included: those run there, on the installed wheel."""

collect_ignore = ["site_files"]
