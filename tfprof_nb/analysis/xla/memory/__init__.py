"""XLA programs' memory (XProf's memory viewer): buffer assignment and the heap simulator's
trace, per program."""
