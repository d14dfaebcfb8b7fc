"""Steps and their time breakdown (step markers, else the repeated call of a compiled function;
on TPUs the TensorCores' own steps: :mod:`.xla_steps`) and the pod view of the steps per host."""
