"""What every tool reads off the events: TensorFlow op names (:mod:`.tf_ops`), XProf's event
groups (:mod:`.grouping`) and the flows between events, interval sets, the trace viewer's
track order and the framework that wrote the profile."""
