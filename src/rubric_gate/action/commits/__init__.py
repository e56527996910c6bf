"""Reading commits: which files a pull request changes, one reader for every file at a commit
(git, or the REST API in a shallow checkout), each blob parsed once per run, the snapshots the
gate compares (merge base, base tip, the PR as it will merge) and the merge that will land."""
