"""Analyses of a decoded profile as pandas DataFrames; nothing here plots or imports TF.

Subpackages, lowest first (tests/test_architecture.py holds which may import which):

* ``runtime``: the unit protocol, the registry, cached results, decoding and where hosts live,
  ``HostData`` and the host facts every unit stands on (``info``, ``shifts``, ...);
* ``trace``: what every tool reads off the events: op names, event groups and flows, interval
  sets, the trace viewer's track order, the framework that wrote the profile;
* ``xla`` (and ``xla.memory``, buffer assignment): XLA programs on TPU, GPU and CPU;
* ``steps``: steps and their time breakdown, the pod view;
* ``gpu``: GPU activity, time accounting, kernel stats, launches;
* ``tf``: the TensorFlow tools: op stats, memory profile, input pipeline, tf.data, scopes;
* ``findings``: the overview, recommendations and the shares their sentences quote.

Each unit is declared in a module named after it (or after the unit it comes with); the
registry finds them in every subpackage.
"""
