"""Findings: the overview, recommendations with their evidence and fixes, the shares their
sentences quote (:mod:`.precision`, :mod:`.input_wait`), and comparisons of two profiles."""
