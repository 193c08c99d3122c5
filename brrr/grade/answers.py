"""Answers as data: what crosses from a student's kernel to the scorer.

A graded run never scores inside the student's process. After each cell the grader asks
the kernel for a *snapshot* of its public variables, encoded as JSON (numbers, strings,
lists, dicts, NumPy arrays and brrr's own ``Timing`` and ``Roofline`` records); the scorer,
a separate process the submission never controlled, *decodes* it into a fresh namespace and
runs the hidden tests there. Anything else (a function, a module, an open file, an object
too large) arrives as an :class:`Unsupported` placeholder that fails any check with a
clear message. Exercise answers are therefore data, never code.
"""
from __future__ import annotations

import json
import math
import numbers

MAX_VALUE_CHARS = 1_000_000        # one encoded answer; bigger ones arrive as Unsupported
MAX_SNAPSHOT_CHARS = 8_000_000     # the whole snapshot
MAX_DEPTH = 20
MAX_ELEMENTS = 100_000             # an array or list longer than this is refused before encoding
# Dict keys and set members: keys crafted to share a hash (ints equal mod 2**61 - 1) make building
# a dict quadratic (60,000 such keys once took the scorer 19 s of CPU), so their count is bounded.
MAX_KEYS = 1_000                   # keys of one dict, or members of one set
MAX_SNAPSHOT_KEYS = 20_000         # keys and members in all of a snapshot's dicts and sets
MAX_KEY_ITEMS = 8                  # items of a tuple key (each a number, string or None)
IGNORED = {"In", "Out", "exit", "quit", "get_ipython", "grader", "otter"}
# The array types an answer may decode to: numeric, one value per element, at most 16 bytes each.
# A snapshot names its own dtype, so a forged 'S700000000' or a structured or subarray dtype
# would make the scorer allocate whatever it asks for.
ARRAY_DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                          "float16", "float32", "float64"})


def _kind(type_name: str) -> str:
    """What an answer of type ``type_name`` is, in words: 'an AlwaysEqual', or for ``...``, the placeholder."""
    if type_name == "ellipsis":
        return "still ..., the blank's placeholder"
    return ("an " if type_name[:1].lower() in "aeiou" else "a ") + type_name


class Unsupported:
    """Stands in for an answer that is not data; any use of it fails with ``why``."""

    def __init__(self, type_name: str, why: str = ""):
        self.type_name = type_name
        self.why = why or (_kind(type_name) + " (answers must be numbers, strings, lists, dicts, "
                           "arrays or brrr records)")

    def __repr__(self):
        return f"<not gradable: {self.why}>"

    def _refuse(self, *args, **kwargs):
        raise TypeError(f"this answer could not be graded: it is {self.why}")

    __call__ = __getattr__ = __getitem__ = __iter__ = __len__ = __float__ = __int__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = _refuse
    __rtruediv__ = __lt__ = __le__ = __gt__ = __ge__ = __bool__ = __abs__ = __neg__ = _refuse

    def __eq__(self, other):
        return False

    __hash__ = None


def _float(x: float):
    return x if math.isfinite(x) else {"__float__": repr(x)}


def encode(value, depth: int = 0):
    """JSON-able form of ``value``; raises TypeError for what is not data."""
    if depth > MAX_DEPTH:
        raise TypeError("nested too deeply")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return _float(float(value))
    if isinstance(value, numbers.Complex):
        return {"__complex__": [_float(value.real), _float(value.imag)]}
    module = type(value).__module__ or ""
    if module.startswith("brrr.") and type(value).__name__ in _records():
        return {"__brrr__": type(value).__name__, "fields": encode(_fields(value), depth + 1)}
    size = _size(value)
    if size > MAX_ELEMENTS:
        raise TypeError(f"too large to grade ({size:,} elements)")
    if isinstance(value, (dict, set, frozenset)) and size > MAX_KEYS:
        raise TypeError(f"too many keys to grade ({size:,}; at most {MAX_KEYS:,} in one dict or set)")
    if module.startswith("numpy") and hasattr(value, "dtype"):
        if getattr(value, "ndim", None) == 0:
            return encode(value.item(), depth)
        if value.dtype.kind not in "biuf":
            raise TypeError(f"an array of {value.dtype}")
        return {"__ndarray__": encode(value.tolist(), depth + 1), "dtype": str(value.dtype)}
    if module.startswith("torch") and type(value).__name__ == "Tensor":
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":  # NumPy has no bfloat16: its values, as float32
            value = value.float()
        return encode(value.numpy(), depth)
    if module.startswith("cupy") and hasattr(value, "get") and hasattr(value, "dtype"):
        return encode(value.get(), depth)  # a GPU array (dev.xp on a GPU), copied to the host
    if isinstance(value, list):
        return [encode(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, depth + 1) for v in value]}
    if isinstance(value, (set, frozenset)):
        return {"__set__": [encode(v, depth + 1) for v in value]}
    if isinstance(value, dict):
        return {"__dict__": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    raise TypeError(_kind(type(value).__name__))


def _size(value) -> int:
    """Elements in an array, tensor or container, read without converting it."""
    for attribute in ("size", "numel"):
        n = getattr(value, attribute, None)
        if attribute == "numel" and callable(n):
            n = n()
        if isinstance(n, numbers.Integral):
            return int(n)
    return len(value) if isinstance(value, (list, tuple, dict, set, frozenset)) else 0


def _fields(record) -> dict:
    import dataclasses
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}


def _records() -> dict:
    """brrr's record types an answer may be, by name (imported late: brrr.grade stays light)."""
    from ..roofline import Roofline
    from ..timing import Timing
    return {"Timing": Timing, "Roofline": Roofline}


def decode(obj):
    """The value ``encode`` described (records rebuilt from their fields, nothing executed)."""
    if isinstance(obj, list):
        return [decode(v) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if "__float__" in obj:
        return float(obj["__float__"])
    if "__complex__" in obj:
        real, imag = (decode(v) for v in obj["__complex__"])
        return complex(real, imag)
    if "__tuple__" in obj:
        return tuple(decode(v) for v in obj["__tuple__"])
    if "__set__" in obj:
        return _keyed("set", obj["__set__"], lambda keys: set(keys))
    if "__dict__" in obj:
        return _keyed("dict", obj["__dict__"], lambda keys: {k: decode(v) for k, (_, v) in zip(keys, obj["__dict__"])})
    if "__ndarray__" in obj:
        return _array(obj)
    if "__brrr__" in obj:
        kind = _records().get(obj["__brrr__"])
        fields = decode(obj.get("fields"))
        if kind is None or not isinstance(fields, dict):
            return Unsupported(str(obj["__brrr__"]), "a record of an unknown kind")
        try:
            return kind(**{str(k): v for k, v in fields.items()})
        except (TypeError, ValueError) as error:
            return Unsupported(obj["__brrr__"], f"a malformed {obj['__brrr__']} ({error})")
    if "__unsupported__" in obj:
        return Unsupported(str(obj["__unsupported__"]), str(obj.get("why", "")))
    return Unsupported("dict", "an unreadable value")


def _array(obj: dict):
    """A NumPy array from its encoded values, or Unsupported when its dtype is not on
    :data:`ARRAY_DTYPES` or it holds more than :data:`MAX_ELEMENTS` numbers."""
    import numpy as np
    dtype = obj.get("dtype")
    if not isinstance(dtype, str) or dtype not in ARRAY_DTYPES:
        return Unsupported("ndarray", f"an array of an unsupported type ({str(dtype)[:40]!r})")
    values, count, stack = obj["__ndarray__"], 0, [obj["__ndarray__"]]
    while stack:                        # count the numbers before NumPy allocates anything
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        else:
            count += 1
        if count > MAX_ELEMENTS or len(stack) > MAX_ELEMENTS:
            return Unsupported("ndarray", f"too large to grade (over {MAX_ELEMENTS:,} elements)")
    try:
        return np.array(decode(values), dtype=np.dtype(dtype))
    except (TypeError, ValueError, OverflowError) as error:
        return Unsupported("ndarray", f"a malformed array ({str(error)[:100]})")


def _hashable(value):
    return tuple(value) if isinstance(value, list) else value


def _keyed(kind: str, items: list, build):
    """A dict or set built by ``build`` from the decoded keys of ``items`` (members, or [key, value]
    pairs), or Unsupported when there are over :data:`MAX_KEYS` or a key is not small: a number,
    string, None or a tuple of up to :data:`MAX_KEY_ITEMS` of them (cheap to hash and compare)."""
    if len(items) > MAX_KEYS:
        return Unsupported(kind, f"too many keys to grade ({len(items):,}; at most {MAX_KEYS:,} in one dict or set)")
    keys = [_hashable(decode(item if kind == "set" else item[0])) for item in items]
    if not all(_small_key(k) for k in keys):
        return Unsupported(kind, f"a {kind} with a key that is not a number, string or short tuple of them")
    return build(keys)


def _small_key(key) -> bool:
    scalar = (type(None), bool, int, float, str)
    return isinstance(key, scalar) or isinstance(key, tuple) and len(key) <= MAX_KEY_ITEMS \
        and all(isinstance(k, scalar) for k in key)


def _keys(obj) -> int:
    """Dict keys and set members in an encoded value, counted before anything is decoded."""
    count, stack = 0, [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            count += sum(len(item[tag]) for tag in ("__dict__", "__set__") if isinstance(item.get(tag), list))
            stack.extend(item.values())
    return count


def gradable_names(namespace: dict) -> list:
    """The names a snapshot covers: public, not modules, functions or classes."""
    import types
    skip = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
    return sorted(name for name, value in namespace.items()
                  if not name.startswith("_") and name not in IGNORED and not isinstance(value, skip))


def snapshot(namespace: dict) -> str:
    """JSON text of every gradable variable in ``namespace`` (what the kernel hands over)."""
    out, total = {}, 0
    for name in gradable_names(namespace):
        try:
            text = json.dumps(encode(namespace[name]), allow_nan=False)
            if len(text) > MAX_VALUE_CHARS:
                raise TypeError(f"too large to grade ({len(text):,} characters as JSON)")
        except Exception as error:  # any failure to encode makes a placeholder, never a crash
            text = json.dumps({"__unsupported__": type(namespace[name]).__name__,
                               "why": str(error)[:200]})
        if total + len(text) > MAX_SNAPSHOT_CHARS:
            break
        out[name] = json.loads(text)
        total += len(text)
    return json.dumps(out)


def restore(text: str) -> dict:
    """Namespace (name -> value) from a snapshot's JSON text; bad entries become placeholders, and
    so do those past :data:`MAX_SNAPSHOT_KEYS` dict keys and set members, in the snapshot's order."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("a snapshot must be a JSON object")
    namespace, keys_left = {}, MAX_SNAPSHOT_KEYS
    for name, obj in data.items():
        if isinstance(name, str) and name.isidentifier() and not name.startswith("_"):
            keys = _keys(obj)
            if keys > keys_left:     # refused before any dict or set is built
                namespace[name] = Unsupported("value", f"too many dict keys and set members to grade ({keys:,}; "
                                                       f"a snapshot may hold {MAX_SNAPSHOT_KEYS:,} in all)")
                continue
            keys_left -= keys
            try:
                namespace[name] = decode(obj)
            except Exception as error:
                namespace[name] = Unsupported("value", f"unreadable ({error})")
    return namespace
