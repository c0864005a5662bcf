"""tf.train.SyncReplicasOptimizer: synchronous data-parallel training across worker replicas.

`apply_gradients` turns a wrapped optimizer's update into a barrier shared by the replicas.
Each worker pushes its gradients into one accumulator per variable (on the variable's device,
shared by name across the workers' graphs), then takes a token from a token queue (on the
global step's device) and records it as its local step. The chief runs, in a queue-runner
thread, the sync op: take `replicas_to_aggregate` averaged gradients from every accumulator,
apply them with the wrapped optimizer (incrementing the global step), and enqueue
`max(total_num_replicas, replicas_to_aggregate)` tokens holding the new global step. A gradient
computed at a local step older than the accumulator's global step is dropped by the
accumulator (kernels/accumulators.py), so no stale gradient reaches the variables.

The session-run hook from `make_session_run_hook` initializes the local step (and, on the
chief, the accumulators' global steps and the first tokens) and starts the chief's queue
runner. Behaviour, names and messages follow TensorFlow 1.15's.
"""
from __future__ import annotations

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.operation import Tensor
from tensorweave.framework.scopes import colocate_with, control_dependencies, device, name_scope
from tensorweave.ops.accumulator_ops import ConditionalAccumulator, SparseConditionalAccumulator
from tensorweave.ops.array_creation_ops import fill
from tensorweave.ops.control_flow_ops import group, no_op
from tensorweave.ops.data_flow_ops import FIFOQueue
from tensorweave.ops.state_ops import assign
from tensorweave.ops.variables import Variable, global_variables, report_uninitialized_variables
from tensorweave.platform import tf_logging as logging
from tensorweave.train import session_manager
from tensorweave.train.optimizer import Optimizer
from tensorweave.train.queue_runner import QueueRunner
from tensorweave.train.session_run_hook import SessionRunHook

__all__ = ["SyncReplicasOptimizer"]


class SyncReplicasOptimizer(Optimizer):
    """Aggregates the gradients of several replicas, then applies them in one update.

    Every replica runs the train op returned by `apply_gradients` (or `minimize`); it blocks
    until the chief has applied the average of `replicas_to_aggregate` gradients. Gradients
    are averaged, not summed: scale the learning rate accordingly. Use the hook from
    `make_session_run_hook(is_chief)` with a MonitoredTrainingSession, or run
    `chief_init_op` / `local_step_init_op`, `get_init_tokens_op()` and the chief queue runner
    yourself.

    Args:
      opt: the optimizer that computes and applies the aggregated gradients.
      replicas_to_aggregate: how many gradients each variable update averages.
      total_num_replicas: how many replicas run (default `replicas_to_aggregate`). More
        than `replicas_to_aggregate` means backup replicas; fewer means each replica
        computes several gradients per update.
      variable_averages: optional ExponentialMovingAverage updated after each sync step.
      variables_to_average: the variables `variable_averages` averages.
      use_locking: passed to the Optimizer base class.
      name: the name scope of the accumulators' ops.
    """

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas"):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        logging.info("SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s",
                     replicas_to_aggregate, total_num_replicas)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._gradients_applied = False
        self._global_step = None
        self._local_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self.local_step_init_op = None
        self.ready_for_local_init_op = None
        self.chief_init_op = None

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's `compute_gradients`.

        Gradients are aggregated in `apply_gradients`, so they can still be changed per
        replica (e.g. clipped by the replica's global norm) in between.

        Returns:
          A list of (gradient, variable) pairs.
        """
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Builds the synchronized update; returns the train op every replica runs.

        The train op pushes this replica's gradients into the accumulators, then waits for a
        token from the token queue and stores it in the replica's local step.

        Args:
          grads_and_vars: (gradient, variable) pairs, as from `compute_gradients`.
          global_step: the global step Variable; required, it is what gradients' staleness
            is measured against.
          name: unused; kept for the Optimizer signature (as in TensorFlow).

        Returns:
          The train op: assigns the dequeued token to the local step.

        Raises:
          ValueError: `grads_and_vars` is empty, `global_step` is None, or a gradient is
            neither a Tensor nor an IndexedSlices.
        """
        del name
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        self._global_step = global_step
        self._create_local_step(global_step)
        chief_init_ops = [self.local_step_init_op]
        with name_scope(None, self._name):
            apply_ops, aggregated, accumulators = self._accumulate(grads_and_vars)
            with device(global_step.device), name_scope(""):
                update_op = self._opt.apply_gradients(aggregated, global_step)
                dummy_queue = self._create_queues(global_step)
                with control_dependencies(apply_ops):
                    token = self._sync_token_queue.dequeue()
                train_op = assign(self._local_step, token)
                sync_op = self._sync_op(update_op, global_step)
                self._chief_queue_runner = QueueRunner(dummy_queue, [sync_op])
            for accumulator, var_device in accumulators:
                with device(var_device):
                    chief_init_ops.append(accumulator.set_global_step(
                        global_step, name="SetGlobalStep"))
            self.chief_init_op = group(*chief_init_ops)
        self._gradients_applied = True
        return train_op

    def _create_local_step(self, global_step) -> None:
        """Creates this replica's local step and the ops that initialize it.

        The local step is colocated with a no-op made where the worker's ops go, so that a
        device function such as replica_device_setter does not put it on a ps task.
        """
        local_anchor = no_op()
        with colocate_with(local_anchor):
            self._local_step = Variable(
                initial_value=0, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                dtype=global_step.dtype.base_dtype, name="sync_rep_local_step")
        self.local_step_init_op = assign(self._local_step, global_step)
        self.ready_for_local_init_op = report_uninitialized_variables(global_variables())

    def _accumulate(self, grads_and_vars):
        """One shared accumulator per variable with a gradient, on the variable's device.

        Returns:
          (the replica's apply-gradient ops, (aggregated gradient, variable) pairs in input
          order with None passed through, [(accumulator, variable device)]).
        """
        apply_ops, aggregated, accumulators = [], [], []
        for grad, var in grads_and_vars:
            if grad is None:
                aggregated.append((None, var))
                continue
            with device(var.device):
                local_step = self._local_step
                if isinstance(grad, Tensor):
                    accumulator = ConditionalAccumulator(
                        grad.dtype, shape=var.get_shape(), shared_name=var.name + "/grad_accum")
                    apply_ops.append(accumulator.apply_grad(grad, local_step=local_step))
                    taken = accumulator.take_grad(self._replicas_to_aggregate)
                elif isinstance(grad, IndexedSlices):
                    accumulator = SparseConditionalAccumulator(
                        grad.dtype, shape=(), shared_name=var.name + "/grad_accum")
                    apply_ops.append(accumulator.apply_indexed_slices_grad(
                        grad, local_step=local_step))
                    taken = accumulator.take_indexed_slices_grad(self._replicas_to_aggregate)
                else:
                    raise ValueError("Unknown grad type!")
            aggregated.append((taken, var))
            accumulators.append((accumulator, var.device))
        return apply_ops, aggregated, accumulators

    def _create_queues(self, global_step):
        """Creates the shared token queue; returns the dummy queue of the chief's runner.

        The queue runner gets the dummy queue rather than the token queue because a runner
        that closes its queue does not reopen it, and the token queue must outlive a chief's
        restart.
        """
        self._sync_token_queue = FIFOQueue(
            -1, global_step.dtype.base_dtype, shapes=(), name="sync_token_q",
            shared_name="sync_token_q")
        return FIFOQueue(1, _dtypes.int32, shapes=(), name="dummy_queue",
                         shared_name="dummy_queue")

    def _sync_op(self, update_op, global_step):
        """After `update_op`: one token per replica holding the new global step, then the
        moving averages if any."""
        with control_dependencies([update_op]):
            tokens = fill([self._tokens_per_step], global_step)
            sync_op = self._sync_token_queue.enqueue_many((tokens,))
        if self._variable_averages is not None:
            with control_dependencies([sync_op]), name_scope(""):
                sync_op = self._variable_averages.apply(self._variables_to_average)
        return sync_op

    def get_chief_queue_runner(self):
        """The QueueRunner the chief runs: aggregate, apply, increment the step, hand out
        tokens.

        Raises:
          ValueError: if `apply_gradients` has not been called.
        """
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_slot(self, *args, **kwargs):
        """The wrapped optimizer's slot `name` for `var`, or None."""
        return self._opt.get_slot(*args, **kwargs)

    def variables(self):
        """The wrapped optimizer's variables in the default graph (not the local step)."""
        return self._opt.variables()

    def get_slot_names(self, *args, **kwargs):
        """The names of the wrapped optimizer's slots."""
        return self._opt.get_slot_names(*args, **kwargs)

    def get_init_tokens_op(self, num_tokens=-1):
        """The op that puts the first `num_tokens` tokens (the global step) in the queue.

        The chief runs it once at the start, so that replicas can finish the first step even
        when there are fewer of them than `replicas_to_aggregate`.

        Args:
          num_tokens: how many tokens; -1 means `replicas_to_aggregate`. Must be at least
            `replicas_to_aggregate - total_num_replicas`.

        Returns:
          The enqueue op, or a no-op when `num_tokens` is 0 or less.

        Raises:
          ValueError: if `apply_gradients` has not been called, or for too few tokens.
        """
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError(f"Too few tokens to finish the first step: {num_tokens} (given) "
                             f"vs {tokens_needed} (needed)")
        if num_tokens <= 0:
            return no_op(name="no_init_tokens")
        with device(self._global_step.device), name_scope(""):
            tokens = fill([num_tokens], self._global_step)
            return self._sync_token_queue.enqueue_many((tokens,))

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """A hook that runs this optimizer's initialization and, on the chief, its queue
        runner (see `get_init_tokens_op` for `num_tokens`)."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)


class _SyncReplicasOptimizerHook(SessionRunHook):
    """Initializes the local step (the chief also the accumulators and first tokens) in each
    new session, and starts the chief's queue runner."""

    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        """Picks the ops of this replica's role; the optimizer's graph must be built."""
        opt = self._sync_optimizer
        if not opt._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before "
                             "using the hook.")
        self._ready_for_local_init_op = opt.ready_for_local_init_op
        if self._is_chief:
            self._local_init_op = opt.chief_init_op
            self._q_runner = opt.get_chief_queue_runner()
            self._init_tokens_op = opt.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = opt.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None

    def after_create_session(self, session, coord):
        """Runs the initialization once the global variables are, then starts the runner.

        Raises:
          RuntimeError: if the global variables are not initialized.
        """
        ready, msg = session_manager._ready(
            self._ready_for_local_init_op, session,
            "Model is not ready for SyncReplicasOptimizer local init.")
        if not ready:
            raise RuntimeError("Init operations did not make model ready for "
                               "SyncReplicasOptimizer local_init. Init op: "
                               f"{self._local_init_op.name}, error: {msg}")
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)
