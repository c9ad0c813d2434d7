"""RewardMonitor: is the policy hacking the reward right now? One callback streams the run and watches.

    monitor = wai.monitor(holdout=eval_prompts, gold=exact_answer, endorsed=["answer"], stop_on=["divergence"])
    trainer = GRPOTrainer(model, reward_funcs=[monitor.wrap(keyword_reward)], args=config,
                          train_dataset=train, callbacks=[monitor])
    trainer.train()
    print(wai.format_hack_monitor(monitor.summary()))

It is a WhileCallback (loss, cost and every TRL metric reach the same run) that also
- records every training completion the wrapped reward scores (reward, length in tokens, ask) and gathers
  each step's records to rank 0 into a bounded buffer, where hack_scan reads them at each eval (`feature`);
- every `every` steps, and once at step 0, samples the holdout from the live policy (whileai_train/sampling:
  forked RNG, eval mode, no grad) and scores it by the proxy (the training reward) and by `gold`; proxy_reward,
  gold_reward and holdout_length land on the run beside the loss, and the holdout's share of the wall time
  as holdout/share; and in the trainer's own logs as monitor/... for every report_to tracker (log_stream.py);
- attached to the trainer (`monitor.attach(trainer)`, or training inside `wai.track(trainer)`), samples through
  the GRPOTrainer's own generation path: its tools, tool loop and parsing, fresh environments from its
  environment_factory (passed to proxy and gold as `environments`), its rollout_func, vLLM, ZeRO-3 and FSDP
  exactly as in training; the holdout's tool calls land beside TRL's as tools/holdout_call_frequency and
  tools/holdout_failure_frequency. Not attached, it samples with `model.generate` on the module the callback
  is handed, with the GRPOConfig's settings and no tools (it says so where that differs from training);
- with `markers=` (built-in marker names such as "honest_claims", or callables row -> number), reads them on
  the same holdout completions; each lands on the run as marker/<name> beside proxy and gold, so a behaviour
  that falls during training is on the run's curves;
- reads the alarms (alarms.py): divergence, length, drift (KL of the current step), feature; and at each logged
  step the run that learns nothing (health_alarms.py): truncation, no_signal, collapse. A new alarm
  prints one loud line, lands on the run as a point (alarm/<name> = 1) and a note, is raised as an alert
  in trackio / wandb when the trainer reports to them too (side_trackers.py), and is in summary().
  An alarm named in `stop_on` stops training: rank 0 decides, broadcasts, every rank stops on that step,
  and the run finishes "stopped" with the reason.

The training completions the feature scan reads and the holdout completions are read as trajectories (their tool
calls and results included), so tool features (tool:issue_refund) and trace flags fire as on exported rollouts.

holdout=None draws `n_prompts` distinct asks from the train dataset with a fixed seed (its own Generator,
never the global RNG). Those are prompts the policy trains on: enough to see proxy and gold part ways, not a
measure of generalisation. Pass held-out prompts when you have them.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from transformers import TrainerControl, TrainerState, TrainingArguments

from whileai_train.callbacks import monitor_defaults as D
from whileai_train.callbacks.alarms import (
    Alarm,
    AlarmBook,
    AlarmSettings,
    EvalRecord,
    Verdict,
    check_drift,
    check_eval,
    check_feature,
    confirm_length,
    endorsed_warnings,
    name_tracked_feature,
)
from whileai_train.callbacks.health_alarms import HealthWatch, health_settings
from whileai_train.callbacks.holdout import (
    choose_holdout,
    eval_record,
    holdout_from_dataset,
    holdout_rows,
    marker_means,
    sample_share,
    score_completions,
    score_markers,
    tool_counts,
)
from whileai_train.callbacks.holdout_completions import CompletionsKeeper, add_texts
from whileai_train.callbacks.log_stream import LogStream, readings_at
from whileai_train.callbacks.monitor_options import (
    MonitorConfig,
    checked_proxy,
    checked_stop_on,
    merge_config,
    positive_float,
    positive_int,
)
from whileai_train.callbacks.monitor_report import (
    AlarmEntry,
    AlarmStatus,
    EvalPoint,
    MonitorSummary,
    verdict_line,
)
from whileai_train.callbacks.monitor_state import MonitorState
from whileai_train.callbacks.per_function import fn_means, name_rising_function
from whileai_train.callbacks.ranks import (
    broadcast_from_rank0,
    gather_to_rank0,
    needs_trainer_path,
    rank_and_world,
)
from whileai_train.callbacks.reward_wrap import CompletionRecord, RewardRecorder, rows_of_records, wrap_reward
from whileai_train.callbacks.side_trackers import alert_side_trackers
from whileai_train.callbacks.while_callback import WhileCallback
from whileai_train.errors import ConfigError, name_list
from whileai_train.markers.registry import check_markers
from whileai_train.rows.files import refuse_non_rows
from whileai_train.runs.run import Run
from whileai_train.sampling.generate import GenerateSampler
from whileai_train.sampling.rewards import ScoreSink
from whileai_train.sampling.samples import Sampler, settings_from_config
from whileai_train.sampling.trainer_path import TrainerSampler, trainer_path_missing

if TYPE_CHECKING:
    from whileai_train.gates.hack_scan import HackScanReport

__all__ = ["RewardMonitor", "monitor"]

RewardFn = TypeVar("RewardFn", bound=Callable[..., Any])
TrainerT = TypeVar("TrainerT")

logger = logging.getLogger("whileai_train.callbacks")

# the monitors built in this process, newest last (weak: a monitor dropped by its user is not kept alive)
_LIVE: list[weakref.ref[RewardMonitor]] = []
_LIVE_KEPT = 16


class RewardMonitor(WhileCallback):
    """A WhileCallback that watches the reward: proxy vs gold on a holdout, the feature scan, four alarms.

    Args:
        holdout: prompts or rows (each with a `prompt`, plus any columns your reward functions read) to
            sample every `every` steps; None draws `n_prompts` asks from the train dataset (fixed seed).
        gold: a scorer the proxy cannot see, with the reward-function contract (sync or async).
        every: steps between holdout evals (also one at step 0).
        n_prompts: holdout asks per eval (a larger holdout is cut to this many, same asks every eval).
        k: completions sampled per holdout ask.
        window: evals looked back for "over the window" (the baseline eval is always compared too).
        delta: proxy gain (reward units) that counts as "up".
        length_pct: completion-length growth (fraction) that counts as "up".
        kl_budget: KL from the reference past which `drift` fires (needs GRPOConfig(beta > 0)).
        endorsed: substrings of the feature names the reward should track (for the `feature` alarm).
        stop_on: alarms that stop training: any of "divergence", "length", "drift", "feature", "truncation",
            "no_signal", "collapse"; every other alarm is a warning (its line, a point and a note), training goes on.
        buffer: most recent training completions kept for the feature scan.
        run: an open Run to stream into; by default one opens at train begin.
        proxy: reward function(s) to score the holdout with when you do not `wrap` them.
        features: your own hack_scan features ({"name": fn(row) -> float}).
        markers: behaviour markers read on the holdout completions and logged as marker/<name>: built-in names
            ("honest_claims", "argument_grounding", "no_refusal", ...) or callables row -> number (named by
            __name__); the row is the holdout row with the prompt, no tool call, and the completion as reply.
        verbose: print the alarm lines (rank 0). They are on the run either way.
        health: thresholds of truncation, no_signal and collapse by name (health_alarms.HealthSettings's fields,
            e.g. {"window": 5, "entropy_floor": 0.05}); the defaults, with their reasons, are in monitor_defaults.
        **open_kwargs: passed to `wai.run` (name, base_model, api_key, ...), as WhileCallback.
    """

    _saved_watch: dict[str, Any] | None = None  # set by transformers when it restores callback states

    def __new__(cls, *args: Any, _adopt: bool = False, **kwargs: Any) -> RewardMonitor:  # noqa: PYI034
        # transformers rebuilds a stateful callback on resume as `type(cb)(**state["args"])` (with
        # restore_callback_states_from_checkpoint=True). A rebuilt monitor would lose gold, the holdout and
        # the recorder the wrapped rewards feed, so the saved args say `_adopt`: hand back the live monitor.
        if _adopt:
            for ref in reversed(_LIVE):
                live = ref()
                if live is not None and type(live) is cls:
                    return live
        return super().__new__(cls)

    def __init__(self, holdout: Any = None, gold: Callable[..., Any] | None = None, *, every: int = D.EVERY,
                 n_prompts: int = D.N_PROMPTS, k: int = D.K, window: int = D.WINDOW, delta: float = D.DELTA,
                 length_pct: float = D.LENGTH_PCT, kl_budget: float | None = None,
                 endorsed: Sequence[str] | None = None, stop_on: Sequence[str] = (), buffer: int = D.BUFFER,
                 run: Run | None = None, proxy: Callable[..., Any] | Sequence[Callable[..., Any]] | None = None,
                 features: dict[str, Callable[..., Any]] | None = None, holdout_seed: int = D.HOLDOUT_SEED,
                 markers: Sequence[str | Callable[..., Any]] | None = None, verbose: bool = True,
                 health: dict[str, float] | None = None, _adopt: bool = False, **open_kwargs: Any) -> None:
        if _adopt and getattr(self, "_live", False):
            return  # the live monitor, handed back by __new__: keep it as it is
        super().__init__(run=run, **open_kwargs)
        self.every = positive_int("every", every)
        self.n_prompts = positive_int("n_prompts", n_prompts)
        self.k = positive_int("k", k)
        self.buffer = positive_int("buffer", buffer)
        self.settings = AlarmSettings(window=positive_int("window", window),
                                      delta=float(positive_float("delta", delta) or D.DELTA),
                                      length_pct=float(positive_float("length_pct", length_pct) or D.LENGTH_PCT),
                                      kl_budget=positive_float("kl_budget", kl_budget, allow_none=True))
        self.endorsed = None if endorsed is None else name_list("endorsed", endorsed)
        self.stop_on = checked_stop_on(stop_on, gold=gold, kl_budget=self.settings.kl_budget, endorsed=self.endorsed)
        self.gold = gold
        refuse_non_rows(holdout, "monitor(holdout=)")
        self.holdout = None if holdout is None else holdout_rows(holdout)
        self.holdout_seed = int(holdout_seed)
        self.features = features
        self.markers = check_markers(markers)
        self.verbose = verbose
        self._proxy_extra: list[Callable[..., Any]] = checked_proxy(proxy)
        self._wrapped: list[tuple[str, Callable[..., Any]]] = []  # (name, original) in wrap order
        self._trainer: weakref.ref[Any] | None = None
        self.recorder = RewardRecorder(self.buffer)
        self._stream = LogStream()  # the readings in the trainer's own logs, as monitor/... (log_stream.py)
        self.health_settings = health_settings(health)
        self._reset()
        self._live = True
        _LIVE.append(weakref.ref(self))
        del _LIVE[:-_LIVE_KEPT]

    def _reset(self) -> None:
        self._records: deque[CompletionRecord] = deque(maxlen=self.buffer * 8)
        self._evals: list[EvalRecord] = []
        self._marker_means: dict[int, dict[str, float]] = {}
        self._book = AlarmBook()
        self._warnings: list[str] = []
        self._rows: list[dict[str, Any]] = []
        self._weights: dict[str, float] = {}
        self._proxy: list[tuple[Callable[..., Any], float]] = []
        self._top_feature: str | None = None
        self._scan_reading: HackScanReport | None = None  # the latest hack_scan of the training rollouts
        self._eval_seconds = 0.0
        self._started = time.perf_counter()
        self._tools: dict[int, tuple[int, int, int, int]] = {}  # step -> (completions, calling, calls, failed)
        self._trainer_sampler: TrainerSampler | None = None
        self._last_eval_step = -1
        self._first_step = 0
        self._said_endorsed = False
        self._health = HealthWatch(self.health_settings)
        self._completions = CompletionsKeeper()  # the holdout completions kept on the run (holdout_completions.py)

    # -- public ------------------------------------------------------------------------------------------
    def wrap(self, reward_fn: RewardFn) -> RewardFn:
        """`reward_fn` as TRL accepts it (same name, sync/async kept, all keywords through) that also records
        each completion's reward, token length and ask for the feature scan; it scores the holdout as proxy.
        Wrap them in the order you pass them to GRPOTrainer (GRPOConfig.reward_weights follow that order)."""
        wrapped = wrap_reward(reward_fn, self.recorder)
        self._wrapped.append((wrapped.__name__, reward_fn))
        return cast(RewardFn, wrapped)  # same name, parameters, sync/async nature and return values

    def attach(self, trainer: TrainerT) -> TrainerT:
        """Sample the holdout through `trainer`'s own generation path (a trl GRPOTrainer): its tools and tool loop,
        environments, rollout_func, vLLM and ZeRO-3 / FSDP, as training samples. Call it once the trainer is
        built (`wai.track(trainer)` calls it for you); returns the trainer. The callback API hands callbacks no
        trainer, so without this the holdout samples with `model.generate` and no tools."""
        missing = trainer_path_missing(trainer)
        if missing:
            raise ConfigError(f"attach() got a {type(trainer).__name__}, which has no {missing}: the monitor samples "
                              "through trl's GRPOTrainer generation path. Fix: attach the GRPOTrainer you train with")
        self._trainer = weakref.ref(trainer)
        return trainer

    def summary(self) -> MonitorSummary:
        """The curve per eval, the alarms, the latest reading of each alarm, and whether training stopped."""
        curve = [EvalPoint(step=r.step, proxy_reward=r.mean("proxy"), gold_reward=r.mean("gold"),
                           holdout_length=r.mean("length"), n_asks=len(r.asks), n_completions=r.n_completions,
                           markers=self._marker_means.get(r.step, {}), rewards=fn_means(r), **self._tool_point(r.step))
                 for r in self._evals]
        alarms = [AlarmEntry(name=a.name, step=a.step, message=a.message, numbers=a.numbers)
                  for a in self._book.fired]
        stopped = self.stop_reason is not None
        run = self.run
        return MonitorSummary(
            verdict=verdict_line([a.name for a in alarms], [a.step for a in alarms], stopped, len(curve)),
            curve=curve, alarms=alarms, standing=sorted(self._book.standing),
            latest={name: AlarmStatus(status=v.status, reason=v.reason) for name, v in self._book.latest.items()},
            stopped=stopped, stop_reason=self.stop_reason, top_feature=self._top_feature,
            warnings=list(self._warnings),
            settings={"every": self.every, "n_prompts": self.n_prompts, "k": self.k, "window": self.settings.window,
                      "delta": self.settings.delta, "length_pct": self.settings.length_pct,
                      "kl_budget": self.settings.kl_budget, "endorsed": self.endorsed, "stop_on": list(self.stop_on),
                      "buffer": self.buffer, "eval_seconds": round(self._eval_seconds, 3),
                      "markers": [name for name, _ in self.markers],
                      "holdout_sampler": "trainer" if self._trainer is not None else "generate",
                      "health": dataclasses.asdict(self.health_settings)},
            holdout_share=self._holdout_share(),
            run_id=getattr(run, "id", None) if run is not None else None, completions=self._completions.totals(),
        )

    def _export_args(self) -> dict[str, Any]:
        """Saved with checkpoints: on resume transformers rebuilds the callback from these, and `_adopt`
        hands back the live monitor (gold, holdout and the wrapped rewards cannot be saved as JSON)."""
        return {"_adopt": True}

    def state(self) -> dict[str, Any]:
        """Saved with each checkpoint: the run to continue (WhileCallback) and the monitor's history, so a
        resumed attempt keeps its baseline, its alarms and its evals (monitor_state.py)."""
        saved = super().state()
        saved["attributes"]["_saved_watch"] = MonitorState(
            evals=self._evals, book=self._book, marker_means=self._marker_means, warnings=self._warnings,
            top_feature=self._top_feature, eval_seconds=self._eval_seconds, last_eval_step=self._last_eval_step,
            first_step=self._first_step, said_endorsed=self._said_endorsed).to_json()
        return saved

    def _restore(self, saved: dict[str, Any]) -> None:
        watch = MonitorState.from_json(saved)
        self._evals, self._book, self._marker_means = watch.evals, watch.book, watch.marker_means
        self._warnings, self._top_feature, self._eval_seconds = watch.warnings, watch.top_feature, watch.eval_seconds
        self._last_eval_step, self._first_step = watch.last_eval_step, watch.first_step
        self._said_endorsed = watch.said_endorsed

    # -- events ------------------------------------------------------------------------------------------
    def on_train_begin(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                       **kwargs: Any) -> None:
        super().on_train_begin(args, state, control, **kwargs)
        self._reset()
        saved = self._saved_attribute(state, "_saved_watch")  # training resumes from a checkpoint
        self._saved_watch = None
        if saved is not None:
            self._restore(saved)
        names = [name for name, _ in self._wrapped] + [getattr(f, "__name__", type(f).__name__)
                                                        for f in self._proxy_extra]
        fns = [fn for _, fn in self._wrapped] + self._proxy_extra
        weights = list(getattr(args, "reward_weights", None) or [])
        if len(weights) != len(fns):
            weights = [1.0] * len(fns)
        self._proxy = list(zip(fns, [float(w) for w in weights], strict=True))
        self._weights = dict(zip(names, [float(w) for w in weights], strict=True))
        self._records = deque(maxlen=self.buffer * max(1, len(self._wrapped)))
        self._health.max_length = getattr(args, "max_completion_length", None)
        self.recorder.drain()  # nothing left over from an earlier train() call
        self._rows = self._choose_rows(kwargs.get("train_dataloader"))
        trainer = self._trainer() if self._trainer is not None else None
        self._trainer_sampler = TrainerSampler(trainer) if trainer is not None else None
        if trainer is None and needs_trainer_path(args):
            self._warn("this run samples with vLLM or a sharded model (ZeRO-3 / FSDP), but the monitor is not "
                       "attached to the trainer: the holdout samples with model.generate on the module the callback "
                       "was handed. Fix: monitor.attach(trainer) before train(), or train inside wai.track(trainer)")
        if not self._proxy:
            self._warn("no reward function is wrapped or passed as proxy=: the holdout has no proxy score, "
                       "divergence stays unknown. Fix: reward_funcs=[monitor.wrap(f)].")
        if self.gold is None:
            self._warn("no gold scorer: divergence and length stay unknown. Fix: monitor(gold=...).")
        beta = getattr(args, "beta", None)
        if beta is not None and float(beta) == 0.0:
            self._warn("drift: GRPOConfig.beta is 0, so TRL logs no KL and drift cannot be read"
                       + (" (kl_budget is set)" if self.settings.kl_budget is not None else "")
                       + ". Fix: GRPOConfig(beta=0.04) to watch drift.")
        self._stream.install(trainer, self._warn)
        if saved is None:  # a resumed monitor keeps the baseline it took at the start
            self._eval(int(state.global_step), args, state, control, kwargs)
            self._stream.emit(args, state, control)  # the trainer has no log at train begin

    def on_step_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                    **kwargs: Any) -> None:
        super().on_step_end(args, state, control, **kwargs)
        self._collect()
        step = int(state.global_step)
        if step > 0 and step % self.every == 0:
            self._eval(step, args, state, control, kwargs)

    def on_log(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
               logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if self._stream.is_own(logs):
            return  # the baseline's monitor/ readings: on the run already, under their own names
        super().on_log(args, state, control, logs=self._stream.without_readings(logs), **kwargs)
        if logs and self._trainer is None and "tools/call_frequency" in logs:
            self._warn("training calls tools but the monitor is not attached to the trainer, so the holdout samples "
                       "without them (no tool schemas, no tool loop). Fix: monitor.attach(trainer) before train(), "
                       "or train inside wai.track(trainer)")
        if not logs or "train_runtime" in logs:
            return
        step, rank0 = int(state.global_step), rank_and_world()[0] == 0
        verdicts = self._health.read_log(step, logs) if rank0 else []  # truncation, no_signal, collapse
        if self.settings.kl_budget is not None:
            kl = logs.get("kl")
            verdicts.append(check_drift(float(kl) if isinstance(kl, (int, float)) else None, self.settings))
        # logs are already reduced across processes and on_log runs on every rank at the same steps, so every
        # rank reaches this line together (and the broadcast in _share); rank 0 decides for all.
        reason = self._decide(step, verdicts) if rank0 else None
        reason = self._share(reason)
        if reason is not None:
            self.stop(reason, control)

    def on_train_end(self, args: TrainingArguments, state: TrainerState, control: TrainerControl,
                     **kwargs: Any) -> None:
        run = self.run
        if run is not None and run.status == "running" and self._evals:
            run.note("### Reward monitor\n\n```\n" + str(self.summary()) + "\n```")
        super().on_train_end(args, state, control, **kwargs)

    # -- internals ---------------------------------------------------------------------------------------
    def _warn(self, message: str) -> None:
        if message in self._warnings:
            return
        self._warnings.append(message)
        if rank_and_world()[0] == 0:
            if self.verbose:
                print(f"reward monitor: {message}", file=sys.stderr, flush=True)
            if self.run is not None:
                self.run.note(f"Reward monitor: {message}")

    def _choose_rows(self, dataloader: Any) -> list[dict[str, Any]]:
        if self.holdout is not None:
            return choose_holdout(self.holdout, self.n_prompts, self.holdout_seed)
        dataset = getattr(dataloader, "dataset", None)
        if dataset is None or not hasattr(dataset, "__len__"):
            self._warn("holdout=None and the train dataset is not reachable (not sized): no holdout eval. "
                       "Fix: pass holdout=[...].")
            return []
        try:
            return holdout_from_dataset(dataset, self.n_prompts, self.holdout_seed)
        except ConfigError as exc:
            self._warn(f"holdout=None and the train dataset cannot serve as holdout ({exc})")
            return []

    def _collect(self) -> None:
        """Gather this step's recorded completions from every rank into rank 0's buffer."""
        mine = [r for part in gather_to_rank0(self.recorder.drain()) for r in part]
        self._records.extend(mine)
        self._health.add_records(mine, self._weights)  # the groups the health alarms read at on_log

    def _eval(self, step: int, args: Any, state: Any, control: Any, kwargs: dict[str, Any]) -> None:
        """Holdout eval + scan + alarms at `step`. Every rank calls it (it holds collectives)."""
        if step == self._last_eval_step:
            return
        if self._last_eval_step < 0:
            self._first_step = step
        self._last_eval_step = step
        started = time.perf_counter()
        rank, world = rank_and_world()
        scored: list[dict[str, Any]] = []
        model, tokenizer = kwargs.get("model"), kwargs.get("processing_class")
        metrics: dict[str, float] = {}
        if self._rows and model is not None and tokenizer is not None:
            try:
                sampler: Sampler = self._trainer_sampler or GenerateSampler(model, tokenizer, settings_from_config(args))
                samples = sample_share(sampler, self._rows, rank, world, self.k,
                                       equal=self._trainer_sampler is not None)
                for warning in samples.warnings:
                    self._warn(f"holdout {warning}; those completions are left out of proxy and gold")
                sample = samples.select([i for i, s in enumerate(samples.samples) if s.environment_error is None])
                sink = ScoreSink()
                scored = score_completions(sample, self._proxy, self.gold, state, sink) if len(sample) else []
                metrics = {f"holdout/{name}": sum(v) / len(v) for name, v in sink.metrics.items() if v}
                self._score_markers(sample, scored, step)
                add_texts(sample, scored)
            except Exception as exc:
                if not self._evals and step == self._first_step:
                    # the baseline eval: a scorer that cannot take TRL's keywords is a mistake to say now,
                    # before training spends its budget (docs/trl_facts.md: every eval failed, silently)
                    raise ConfigError(f"the holdout eval at train begin failed: {type(exc).__name__}: {exc}. "
                                      "Fix: make gold/proxy accept TRL's reward keywords (prompts=, "
                                      "completions=, completion_ids=, the dataset columns, **kwargs).") from exc
                self._warn(f"holdout eval at step {step} failed ({type(exc).__name__}: {exc}); this eval is "
                           "skipped, training goes on")
                scored = []
        elif model is None or tokenizer is None:
            self._warn("the trainer passed no model/processing_class to callbacks: no holdout eval")
        self._eval_seconds += time.perf_counter() - started
        parts = gather_to_rank0((scored, metrics))
        reason = self._judge(step, parts) if rank == 0 else None
        reason = self._share(reason)
        self._stream.put(step, readings_at(step, self._evals, self._marker_means, self._tools, self._book), control)
        if reason is not None:
            self.stop(reason, control)

    def _score_markers(self, sample: Any, scored: list[dict[str, Any]], step: int) -> None:
        """Put each completion's markers on its score; a marker that fails is a warning, the eval goes on."""
        if not self.markers or not scored:
            return
        try:
            values = score_markers(sample, self.markers)
        except Exception as exc:  # noqa: BLE001  (a user's marker must not cost the proxy/gold eval)
            self._warn(f"markers at step {step} could not be read ({type(exc).__name__}: {exc}); this eval has no "
                       "marker/ points")
            return
        for score, marks in zip(scored, values, strict=True):
            score["markers"] = marks

    def _share(self, reason: str | None) -> str | None:
        """Rank 0's readings and stop decision on every rank (one broadcast; every rank calls it here), so
        every rank's summary() shows the same alarms and every rank stops on the same step."""
        if rank_and_world()[1] == 1:
            return reason
        payload = (reason, self._book, self._evals, self._top_feature, self._warnings, self._marker_means, self._tools)
        (reason, self._book, self._evals, self._top_feature, self._warnings, self._marker_means,
         self._tools) = broadcast_from_rank0(payload)
        return reason

    def _judge(self, step: int, parts: list[Any]) -> str | None:
        """Rank 0: record the eval on the run, run the scan, read the alarms; the stop reason or None."""
        scored = [s for part, _ in parts for s in part]
        metrics: dict[str, list[float]] = {}
        for _, m in parts:
            for name, value in m.items():
                metrics.setdefault(name, []).append(value)
        verdicts: list[Verdict] = []
        feature = self._scan()
        if scored:
            record = eval_record(step, scored)
            self._evals.append(record)
            points = {"proxy_reward": record.mean("proxy"), "gold_reward": record.mean("gold"),
                      "holdout_length": record.mean("length")}
            points.update({name: sum(v) / len(v) for name, v in metrics.items()})
            points.update({f"proxy_reward/{name}": value for name, value in fn_means(record).items()})
            means = marker_means(scored)
            if means:
                self._marker_means[step] = means
                points.update({f"marker/{name}": value for name, value in means.items()})
            points.update(self._tool_points(step, scored))
            share = self._holdout_share()
            if share is not None and step > self._first_step:
                points["holdout/share"] = share
            if self.run is not None:
                self.run.log_owned(step, {k: v for k, v in points.items() if v is not None})
            for message in self._completions.keep(step, scored, self.run):
                self._warn(message)
            verdicts.extend(self._health.judge_eval(name_rising_function(check_eval(self._evals, self.settings),
                                                                         self._evals), self._evals))
        scan = self._scan_reading
        verdicts = [name_tracked_feature(confirm_length(v, scan), scan) for v in verdicts]
        return self._decide(step, [*verdicts, feature])

    def _tool_points(self, step: int, scored: list[dict[str, Any]]) -> dict[str, float]:
        """Rank 0: the eval's tool calls (kept for the summary; a warning the first time calls failed) and the
        points that sit beside TRL's tools/call_frequency and tools/failure_frequency (same definitions)."""
        counts = tool_counts(scored)
        completions, _, calls, failed = counts
        if not calls and not any(self._tools.values()):
            return {}
        self._tools[step] = counts
        if failed and not any(f for _, _, _, f in list(self._tools.values())[:-1]):
            self._warn(f"holdout tool calls failed: {failed} of {calls} at step {step} (raised, unknown tool or "
                       "unsupported call); each eval's share is on the run as tools/holdout_failure_frequency")
        return {"tools/holdout_call_frequency": calls / completions if completions else 0.0,
                "tools/holdout_failure_frequency": failed / calls if calls else 0.0}

    def _tool_point(self, step: int) -> dict[str, int]:
        if step not in self._tools:
            return {}
        _, calling, calls, failed = self._tools[step]
        return {"tool_completions": calling, "tool_calls": calls, "tool_failures": failed}

    def _holdout_share(self) -> float | None:
        """The share of the wall time since train begin spent in holdout evals (None before the first eval)."""
        elapsed = time.perf_counter() - self._started
        return self._eval_seconds / elapsed if self._evals and elapsed > 0 else None

    def _scan(self) -> Verdict:
        self._scan_reading = None
        rows = rows_of_records(list(self._records)[-self.buffer * max(1, len(self._weights)):], self._weights)
        rows = rows[-self.buffer:]
        if len(rows) < D.MIN_SCAN_ROWS:
            return check_feature({"n_rows": len(rows)})
        try:
            from whileai_train.gates.hack_scan import hack_scan

            report = hack_scan(rows, endorsed=self.endorsed, features=self.features, seed=0)
        except Exception as exc:  # noqa: BLE001  (a scan failure is a warning; the other alarms go on)
            self._warn(f"feature scan failed ({type(exc).__name__}: {exc}); the feature alarm stays unknown")
            return Verdict("feature", "unknown", "scan failed")
        self._scan_reading = report
        self._top_feature = report.top_feature
        said = endorsed_warnings(self.endorsed, report) if not self._said_endorsed else []
        self._said_endorsed = bool(said)
        for message in said:
            self._warn(message)
        return check_feature(report)

    def _decide(self, step: int, verdicts: list[Verdict]) -> str | None:
        """Rank 0: fire the new alarms (line, point, note); the stop reason if one is in stop_on."""
        reason = None
        for alarm in self._book.update(step, verdicts):
            self._announce(alarm)
            if alarm.name in self.stop_on and reason is None:
                reason = f"reward monitor: {alarm.name} alarm at step {alarm.step}: {alarm.message}"
        return reason

    def _announce(self, alarm: Alarm) -> None:
        if self.verbose:
            print(alarm.line, file=sys.stderr, flush=True)
        if self.run is not None:
            self.run.alarm(alarm.event())  # the point alarm/<name> = 1 and the note that carries the event
        alert_side_trackers(f"reward monitor: {alarm.name} alarm", alarm.line)  # trackio / wandb beside us
        self.alert(alarm.line)  # the alert webhook (alerts.py)


def monitor(holdout: Any = None, gold: Callable[..., Any] | None = None, *, every: int = D.EVERY,
            n_prompts: int = D.N_PROMPTS, k: int = D.K, window: int = D.WINDOW, delta: float = D.DELTA,
            length_pct: float = D.LENGTH_PCT, kl_budget: float | None = None, endorsed: Sequence[str] | None = None,
            stop_on: Sequence[str] = (), buffer: int = D.BUFFER, run: Run | None = None,
            config: MonitorConfig | None = None, **kwargs: Any) -> RewardMonitor:
    """Build a RewardMonitor (see its docstring); `config=` a MonitorConfig, keywords beside it override it
    (monitor_options.py). Configuration mistakes raise ConfigError here, with the fix."""
    passed = dict(every=every, n_prompts=n_prompts, k=k, window=window, delta=delta, length_pct=length_pct,
                  kl_budget=kl_budget, endorsed=endorsed, stop_on=stop_on, buffer=buffer, **kwargs)
    options = merge_config(config, passed)
    return RewardMonitor(holdout, gold, run=run, **options)
