"""The monitor's collectives across training processes: every rank calls each one, in the same order.

Without torch.distributed initialised (one process) each is the identity on this process's object, so the
monitor runs the same code on one GPU, on several, and on CPU.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["broadcast_from_rank0", "gather_to_rank0", "needs_trainer_path", "rank_and_world"]


def _initialised_dist() -> Any:
    import torch.distributed as dist

    return dist if dist.is_available() and dist.is_initialized() else None


def rank_and_world() -> tuple[int, int]:
    dist = _initialised_dist()
    return (dist.get_rank(), dist.get_world_size()) if dist is not None else (0, 1)


def gather_to_rank0(obj: Any) -> list[Any]:
    """Every rank's `obj`, on rank 0 (others get [])."""
    dist = _initialised_dist()
    if dist is None:
        return [obj]
    rank, world = dist.get_rank(), dist.get_world_size()
    out: list[Any] | None = [None] * world if rank == 0 else None
    dist.gather_object(obj, out, dst=0)
    return list(out) if out is not None else []


def broadcast_from_rank0(obj: Any) -> Any:
    """Rank 0's `obj` on every rank."""
    dist = _initialised_dist()
    if dist is None:
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def needs_trainer_path(args: Any) -> bool:
    """Whether training samples somewhere model.generate on the callback's module cannot: vLLM, or a model
    sharded by FSDP or DeepSpeed ZeRO-3 (in the arguments, or set up by `accelerate launch`)."""
    if getattr(args, "use_vllm", False) or getattr(args, "fsdp", None) or os.environ.get("ACCELERATE_USE_FSDP") == "true":
        return True
    deepspeed = getattr(args, "hf_deepspeed_config", None)
    return deepspeed is not None and bool(deepspeed.is_zero3())
