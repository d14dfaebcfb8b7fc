"""Analyses of a decoded profile as pandas DataFrames; nothing here plots or imports TF."""
