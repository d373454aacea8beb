"""Writing results: rendered trees (staged and swapped in), stamps for the
unchanged-render shortcut, and one atomic file write for everything else."""
