"""Decoding: a profile file into one host's data (:func:`.decode.decode_host`, the one path
every backend takes, Dask workers included) and a local profile's hosts side by side
(:func:`.decode.decode_hosts`)."""
