"""GRPO with the reward monitor as a Modal job on a preemptible GPU: `train()` (train.py) inside a Modal function.

    pip install 'whileai_train[modal]'
    modal secret create whileai WHILEAI_API_KEY=...        # your platform key (or a serve's URL and key)
    modal run recipes/05-modal/grpo/app.py --steps 200 --name grpo-modal

What Modal gives the job, and why:
- a GPU (`GPU`): the function runs where the card is;
- the secret `whileai` (`SECRET`): the platform key reaches the container as WHILEAI_API_KEY and never sits in
  the image or the code; put WHILEAI_API_URL beside it to send the run to a `whileai-train serve` instead;
- a Volume for checkpoints (`CHECKPOINTS`, mounted at `CHECKPOINT_DIR`): the container's own disk vanishes with
  it, the Volume does not; each checkpoint is committed to it as soon as it is written;
- retries (`RETRIES`): a crashed attempt starts again, and a preempted one is restarted by Modal on the same
  input. Either way train() finds the last checkpoint on the Volume and resumes it as the same run.
"""

from __future__ import annotations

from pathlib import Path

import modal

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parents[2]  # the whileai_train checkout this recipe sits in

GPU = "A10G"
TIMEOUT_S = 6 * 60 * 60  # one attempt's limit; a longer training run resumes across attempts
CHECKPOINT_DIR = "/checkpoints"
RETRIES = modal.Retries(max_retries=3, backoff_coefficient=2.0, initial_delay=10.0)
SECRET = modal.Secret.from_name("whileai")
CHECKPOINTS = modal.Volume.from_name("whileai-grpo-checkpoints", create_if_missing=True)

image = (
    modal.Image.debian_slim(python_version="3.11")
    .pip_install_from_pyproject(str(REPOSITORY / "pyproject.toml"))  # the library's own dependencies
    .add_local_python_source("whileai_train")                         # the library from this checkout
    .add_local_file(HERE / "train.py", "/root/train.py")
)
app = modal.App("whileai-grpo", image=image)


@app.function(gpu=GPU, secrets=[SECRET], volumes={CHECKPOINT_DIR: CHECKPOINTS}, retries=RETRIES, timeout=TIMEOUT_S)
def grpo(steps: int = 200, save_steps: int = 20, every: int = 20, name: str = "grpo-modal",
         model_name: str | None = None) -> str | None:
    """One attempt: resume `name` from its last checkpoint on the Volume (or start it), train, return the run id.

    The run's local store and spool live on the container's disk (WHILEAI_HOME, ~/.whileai): with a key the
    spool only holds what is not yet sent, and everything up to each checkpoint is sent when it is written."""
    from train import train

    return train(f"{CHECKPOINT_DIR}/{name}", steps=steps, save_steps=save_steps, every=every, name=name,
                 model_name=model_name, on_checkpoint=CHECKPOINTS.commit,
                 preempted_by=(KeyboardInterrupt,))  # Modal preempts with SIGINT: left open, not "failed"


@app.local_entrypoint()
def main(steps: int = 200, save_steps: int = 20, every: int = 20, name: str = "grpo-modal",
         model_name: str = "") -> None:
    run_id = grpo.remote(steps=steps, save_steps=save_steps, every=every, name=name, model_name=model_name or None)
    print(f"run {run_id}: `whileai-train show {run_id}` where the run went")
