"""``SummaryWriter``: PyTorch's TensorBoard writer over tensorboard's own ``EventFileWriter``.

Event files are written by the ``tensorboard`` package (records, CRCs, the background flush
thread); this module only builds the summaries from ember tensors and routes them: one
``FileWriter`` for the run, one more per ``add_scalars`` series and per ``add_hparams`` run, as
PyTorch lays them out so TensorBoard shows them the same way.
"""

from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from typing import Any

from tensorboard.compat.proto import event_pb2
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from .summary import default_bins, histogram, hparams, image, scalar, text

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """One event file in ``log_dir``: events stamped with the wall time and step."""

    def __init__(
        self, log_dir: str, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = ""
    ) -> None:
        log_dir = str(log_dir)
        self.event_writer = EventFileWriter(log_dir, max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step: Any = None, walltime: float | None = None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary: Any, global_step: Any = None, walltime: float | None = None) -> None:
        self.add_event(Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile: tuple, walltime: float | None = None) -> None:
        graph, stepstats = graph_profile
        self.add_event(Event(graph_def=graph.SerializeToString()), None, walltime)
        tagged = event_pb2.TaggedRunMetadata(tag="step1", run_metadata=stepstats.SerializeToString())
        self.add_event(Event(tagged_run_metadata=tagged), None, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


class SummaryWriter:
    """Write scalars, histograms, images, text, graphs and hparams for TensorBoard.

    ``log_dir`` defaults to ``runs/<Mon DD_HH-MM-SS>_<host><comment>``, as PyTorch's. Use it as
    a context manager (or call ``close``) so the last events reach the disk.
    """

    def __init__(
        self,
        log_dir: str | None = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        if not log_dir:
            now = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", now + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] | None = None
        self._get_file_writer()
        self.default_bins = default_bins()

    def _get_file_writer(self) -> FileWriter:
        """The run's writer, made again after ``close`` (later calls reopen the run)."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # A restart at step T: TensorBoard hides this run's events from step T on.
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(
                    Event(step=self.purge_step, session_log=SessionLog(status=SessionLog.START))
                )
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        return self.log_dir

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: Any = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        summary = scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(
        self, main_tag: str, tag_scalar_dict: dict, global_step: Any = None, walltime: float | None = None
    ) -> None:
        """Several series in one chart: each is a run of its own, ``<log_dir>/<main_tag>_<tag>``."""
        walltime = time.time() if walltime is None else walltime
        root = self._get_file_writer().get_logdir()
        assert self.all_writers is not None
        for tag, value in tag_scalar_dict.items():
            path = root + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self.all_writers.get(path)
            if writer is None:
                writer = self.all_writers[path] = FileWriter(
                    path, self.max_queue, self.flush_secs, self.filename_suffix
                )
            writer.add_summary(scalar(main_tag, value), global_step, walltime)

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: Any = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
    ) -> None:
        """``bins``: TensorFlow's default edges, or anything ``numpy.histogram`` takes."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(
            histogram(tag, values, bins, max_bins=max_bins), global_step, walltime
        )

    def add_image(
        self,
        tag: str,
        img_tensor: Any,
        global_step: Any = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
    ) -> None:
        self._get_file_writer().add_summary(
            image(tag, img_tensor, dataformats=dataformats), global_step, walltime
        )

    def add_images(
        self,
        tag: str,
        img_tensor: Any,
        global_step: Any = None,
        walltime: float | None = None,
        dataformats: str = "NCHW",
    ) -> None:
        """A batch of images, tiled eight to a row into one image."""
        self._get_file_writer().add_summary(
            image(tag, img_tensor, dataformats=dataformats), global_step, walltime
        )

    def add_figure(
        self,
        tag: str,
        figure: Any,
        global_step: Any = None,
        close: bool = True,
        walltime: float | None = None,
    ) -> None:
        """A matplotlib figure (or a list of them) as an image; needs ``matplotlib``."""
        from ._convert import figure_to_image

        fmt = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime, dataformats=fmt)

    def add_text(
        self, tag: str, text_string: str, global_step: Any = None, walltime: float | None = None
    ) -> None:
        self._get_file_writer().add_summary(text(tag, text_string), global_step, walltime)

    def add_graph(
        self, model: Any, input_to_model: Any = None, verbose: bool = False, use_strict_trace: bool = True
    ) -> None:
        """The model's graph as ``ember.jit.trace`` records it for ``input_to_model``."""
        from ._graph import graph

        self._get_file_writer().add_graph(graph(model, input_to_model, verbose, use_strict_trace))

    def add_hparams(
        self,
        hparam_dict: dict,
        metric_dict: dict,
        hparam_domain_discrete: dict | None = None,
        run_name: str | None = None,
        global_step: Any = None,
    ) -> None:
        """One hparams session: written as a run of its own (``run_name``, default the time) under log_dir."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        summaries = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        with SummaryWriter(log_dir=logdir) as sub:
            fw = sub._get_file_writer()
            for s in summaries:
                fw.add_summary(s, global_step)
            for k, v in metric_dict.items():
                sub.add_scalar(k, v, global_step)

    def flush(self) -> None:
        """Write every pending event of every writer of this run to disk."""
        for writer in (self.all_writers or {}).values():
            writer.flush()

    def close(self) -> None:
        """Flush and close the files; a second close does nothing, a later ``add_*`` reopens."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:  # noqa: PYI034 - typing.Self needs Python 3.11
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
