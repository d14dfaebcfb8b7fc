"""Parsing TensorFlow op names: ``name:Type``, tf.data iterators and memcpys."""

from __future__ import annotations

import re

__all__ = ["parse_tf_op", "TF", "TF_DATA", "MEMCPY", "JAX", "UNKNOWN"]

TF, TF_DATA, MEMCPY, JAX, UNKNOWN = "tensorflow", "tf.data", "memcpy", "jax", "unknown"
_NAME = re.compile(r"[A-Za-z0-9.][A-Za-z0-9_.\/>-]*\Z")
_TYPE = re.compile(r"[A-Z_][a-zA-Z0-9_]*\Z")
_JAX = re.compile(r"[a-z_][a-z0-9_]*(\[.*\])?\Z")
_MEMCPY = (("MEMCPYHTOD", "MemcpyHToD"), ("MEMCPYDTOH", "MemcpyDToH"),
           ("MEMCPYDTOD", "MemcpyDToD"), ("MEMCPYHTOH", "MemcpyHToH"))


def _derived_type(name: str) -> str:
    op = name.split("/")[-1]
    head, _, suffix = op.rpartition("_")
    return head if head and suffix.isdigit() else op


def parse_tf_op(full: str) -> tuple[str, str, str]:
    """(category, op name, op type) of a trace event or ``tf_op`` name.

    ``"dense/MatMul:MatMul"`` -> ("tensorflow", "dense/MatMul", "MatMul");
    ``"Iterator::Root::Map"`` -> ("tf.data", the full name, "Dataset");
    ``"MemcpyHToD"`` -> ("memcpy", ..., "MemcpyHToD"); anything else is "unknown".
    """
    name, sep, op_type = full.partition(":")
    if not sep:
        upper = full.upper()
        for prefix, kind in _MEMCPY:
            if upper.startswith(prefix):
                return MEMCPY, full, kind
        return UNKNOWN, full, ""
    if name == "Iterator":
        return TF_DATA, full, "Dataset"
    if _NAME.match(name) and _TYPE.match(op_type):
        return TF, name, op_type
    derived = _derived_type(name) if op_type == "" else op_type
    if _JAX.match(derived):
        return JAX, name, derived.split("[")[0]
    if op_type == "":
        return TF, name, derived
    return UNKNOWN, full, ""
