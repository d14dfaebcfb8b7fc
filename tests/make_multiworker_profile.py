"""Capture a real two-worker TensorFlow pod on this machine (run by hand, not by the suite):
``tf.distribute.MultiWorkerMirroredStrategy`` on CPU (RING collectives over gRPC on
localhost), each worker profiling itself; worker 1 sleeps 5 ms a step, so it is the slower.

    python tests/make_multiworker_profile.py RUN_DIR

writes RUN_DIR/worker-0.xplane.pb and RUN_DIR/worker-1.xplane.pb (how
tests/data/tf_multiworker_ring/ was made).  ``... worker INDEX PORT0 PORT1 LOGDIR`` is one
worker (the script starts both)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STEPS, BATCH = 12, 64


def worker(index: int, ports: list[str], logdir: str) -> None:
    os.environ["TF_CONFIG"] = json.dumps({
        "cluster": {"worker": [f"localhost:{p}" for p in ports]},
        "task": {"type": "worker", "index": index}})
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras
    import tensorflow as tf

    ring = tf.distribute.experimental.CommunicationImplementation.RING
    strategy = tf.distribute.MultiWorkerMirroredStrategy(
        communication_options=tf.distribute.experimental.CommunicationOptions(
            implementation=ring))

    def example(i):
        x = tf.random.stateless_normal([32], seed=tf.stack([i, tf.constant(0, tf.int64)]))
        return x, i % 10

    data = tf.data.Dataset.range(10**6).map(example).batch(BATCH).prefetch(2)
    with strategy.scope():
        model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"),
                                  keras.layers.Dense(10)])
        opt = keras.optimizers.SGD(0.01)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def replica_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.nn.compute_average_loss(loss_fn(y, model(x, training=True)),
                                              global_batch_size=BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def train_step(it):
        x, y = next(it)
        losses = strategy.run(replica_step, args=(x, y))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    it = iter(strategy.experimental_distribute_dataset(data))
    for _ in range(3):
        train_step(it)
    tf.profiler.experimental.start(logdir)
    for step in range(STEPS):
        with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
            loss = train_step(it)
            if index == 1:
                time.sleep(0.005)
            loss.numpy()
    tf.profiler.experimental.stop()


def _free_ports(n: int) -> list[str]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("localhost", 0))
    ports = [str(s.getsockname()[1]) for s in socks]
    for s in socks:
        s.close()
    return ports


def main(run_dir: str) -> None:
    ports, out = _free_ports(2), Path(run_dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        procs = [subprocess.Popen([sys.executable, __file__, "worker", str(i), *ports,
                                   f"{tmp}/w{i}"]) for i in range(2)]
        if any(p.wait(timeout=600) for p in procs):
            raise SystemExit("a worker failed")
        for i in range(2):
            shutil.copy(next(Path(f"{tmp}/w{i}").rglob("*.xplane.pb")),
                        out / f"worker-{i}.xplane.pb")


if __name__ == "__main__":
    if sys.argv[1] == "worker":
        worker(int(sys.argv[2]), sys.argv[3:5], sys.argv[5])
    else:
        main(sys.argv[1])
