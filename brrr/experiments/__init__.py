"""The canonical sweeps the chapters run; each returns a :class:`brrr.Result`.

One module per idea; every function here is importable as ``brrr.experiments.NAME``.
A chapter's topic module re-exports its parts, so ``brrr.experiments.overhead`` (parts:
``wallclock``, ``overhead_calls``, ``overhead_batch``, ``overhead_async``),
``brrr.experiments.fusion`` (``fusion_model``, ``fusion_fusers``, ``fusion_tables``,
``fusion_epilogue``) and ``brrr.experiments.recompute`` (``recompute_saved``,
``recompute_checkpoint``, ``recompute_compiled``) hold every name of their chapter.
Records follow the schema of :mod:`brrr.results`.
"""
from .common import run_sweep, is_out_of_memory
from .compute import elementwise_vs_matmul, matmul_flops, matmul_tensor_cores, mfu_vs_batch
from .overhead import (time_vs_size, fit_overhead, python_ops_per_second, async_demo,
                       double_the_batch, batch_verdict, mlp_factory, reduce_overhead_demo,
                       fit_overheads, fit_table, call_overhead, call_table, batch_table)
from .bandwidth import bandwidth_vs_size
from .matmul import matmul_vs_size
from .roofline import measure_roofline, measured_roofline, timed_at
from .pointwise import pointwise_repeat_sweep, predicted_knee, measured_knee
from .fusion import (fusion_speedup, speedups, speedup_lines, predicted_speedup, chain_traffic,
                     crossover_k, epilogue_fusion, cos_cases, epilogue_traffic, generated_kernels, time_lines)
from .recompute import (saved_tensors, saved_bytes, mlp_stack, Checkpointed, checkpoint_sweep,
                        checkpoint_model, compiled_recompute, pointwise_chain, peak_memory)
from . import diagnosis
from . import capstone  # chapter 8: brrr.experiments.capstone.run_steps, steps_table
from .diagnosis import compile_remedy, batch_remedy, precision_remedy, low_precision_dtype
from .dtypes import dtype_roofline
from .latency import bandwidth_vs_parallelism, load_latency  # chapter 2: latency-bound kernels
from . import capstone_decode  # chapter 8: brrr.experiments.capstone_decode.decode_sweep, decode_table
from . import capstone_train  # chapter 8: brrr.experiments.capstone_train.train_steps, train_table
