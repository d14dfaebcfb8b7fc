"""Tests of tfprof_nb.analysis.hardware."""
