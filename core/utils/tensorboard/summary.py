"""Summary protocol buffers (tensorboard's own message classes) for each kind of record.

Each function returns a ``Summary`` (or, for hparams, three) that ``FileWriter.add_summary``
wraps in an ``Event``. The encodings are PyTorch's, so TensorBoard shows ember's runs as
PyTorch's: scalars as ``simple_value``, histograms with only the populated range of buckets,
images as PNG, text and hparams under their plugins' metadata.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto

from ..._tensor import Tensor
from ._convert import convert_to_HWC, make_np

__all__ = ["histogram", "hparams", "image", "make_histogram", "scalar", "text"]


def scalar(name: str, value: Any, new_style: bool = False, double_precision: bool = False) -> Summary:
    """One number; ``new_style`` stores it as a tensor under the scalars plugin instead."""
    arr = make_np(value).squeeze()
    if arr.ndim != 0:
        raise AssertionError(
            f"Tensor should contain one element (0 dimensions). Was given size: {arr.size} and {arr.ndim} dimensions."
        )
    number = float(arr)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=number)])
    proto = (
        TensorProto(double_val=[number], dtype="DT_DOUBLE")
        if double_precision
        else TensorProto(float_val=[number], dtype="DT_FLOAT")
    )
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=meta)])


def default_bins() -> list[float]:
    """TensorFlow's histogram edges: +-1e-12 growing by 10% per bucket up to 1e20, and 0."""
    edges = []
    v = 1e-12
    while v < 1e20:
        edges.append(v)
        v *= 1.1
    return [-e for e in reversed(edges)] + [0.0] + edges


def make_histogram(values: np.ndarray, bins: Any, max_bins: int | None = None) -> HistogramProto:
    """Counts over ``bins`` (as ``np.histogram`` takes them), cut to the populated range.

    TensorBoard reads each bucket's right limit only, so one empty bucket is kept on the left.
    """
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        step = len(counts) // max_bins
        short = len(counts) % step
        if short:
            counts = np.pad(counts, (0, step - short))
        counts = counts.reshape(-1, step).sum(axis=-1)
        limits = np.append(limits[:-1:step], limits[-1])
    nonzero = np.flatnonzero(counts)
    if nonzero.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    start, end = int(nonzero[0]), int(nonzero[-1]) + 1
    counts = counts[start - 1 : end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start : end + 1]
    return HistogramProto(
        min=values.min(),
        max=values.max(),
        num=len(values),
        sum=values.sum(),
        sum_squares=values.dot(values),
        bucket_limit=limits.tolist(),
        bucket=counts.tolist(),
    )


def histogram(name: str, values: Any, bins: Any, max_bins: int | None = None) -> Summary:
    hist = make_histogram(make_np(values).astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def image(tag: str, tensor: Any, rescale: float = 1, dataformats: str = "NCHW") -> Summary:
    """A PNG image. uint8 data is taken as 0..255, any other dtype as 0..1 (scaled by 255, clipped)."""
    arr = convert_to_HWC(make_np(tensor), dataformats)
    scale = 1 if arr.dtype == np.uint8 else 255
    arr = (arr.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(arr, rescale))])


def make_image(arr: np.ndarray, rescale: float = 1) -> Summary.Image:
    from PIL import Image

    height, width, channels = arr.shape
    picture = Image.fromarray(arr)
    picture = picture.resize((int(width * rescale), int(height * rescale)), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    picture.save(buf, format="PNG")
    return Summary.Image(height=height, width=width, colorspace=channels, encoded_image_string=buf.getvalue())


def text(tag: str, text: str) -> Summary:
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

    meta = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(
            plugin_name="text", content=TextPluginData(version=0).SerializeToString()
        )
    )
    proto = TensorProto(
        dtype="DT_STRING",
        string_val=[text.encode("utf_8")],
        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]),
    )
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=proto)])


def _plugin_summary(tag: str, **content: Any) -> Summary:
    from tensorboard.plugins.hparams import metadata
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    data = HParamsPluginData(version=metadata.PLUGIN_DATA_VERSION, **content)
    meta = SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(
            plugin_name=metadata.PLUGIN_NAME, content=data.SerializeToString()
        )
    )
    return Summary(value=[Summary.Value(tag=tag, metadata=meta)])


def hparams(hparam_dict: Any, metric_dict: Any, hparam_domain_discrete: Any = None) -> tuple[Summary, ...]:
    """The experiment, session-start and session-end summaries of the hparams plugin.

    As PyTorch: a bool is an int, so it is logged as a number; a tensor as its first element.
    """
    from google.protobuf import struct_pb2
    from tensorboard.plugins.hparams import metadata
    from tensorboard.plugins.hparams.api_pb2 import (
        DataType,
        Experiment,
        HParamInfo,
        MetricInfo,
        MetricName,
        Status,
    )
    from tensorboard.plugins.hparams.plugin_data_pb2 import SessionEndInfo, SessionStartInfo

    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in domains.items():
        if (
            k not in hparam_dict
            or not isinstance(v, list)
            or not all(isinstance(d, type(hparam_dict[k])) for d in v)
        ):
            raise TypeError(
                f"parameter: hparam_domain_discrete[{k}] should be a list of same type as hparam_dict[{k}]."
            )
    start = SessionStartInfo()
    infos = []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, Tensor):
            v = make_np(v).reshape(-1)[0]
            start.hparams[k].number_value = v
            infos.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        for kind, field, dtype in ((int | float, "number_value", "FLOAT64"), (str, "string_value", "STRING")):
            if isinstance(v, kind):
                setattr(start.hparams[k], field, v)
                domain = None
                if k in domains:
                    domain = struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in domains[k]])
                infos.append(
                    HParamInfo(name=k, type=DataType.Value(f"DATA_TYPE_{dtype}"), domain_discrete=domain)
                )
                break
        else:
            raise ValueError("value should be one of int, float, str, bool, or ember.Tensor")
    experiment = Experiment(
        hparam_infos=infos, metric_infos=[MetricInfo(name=MetricName(tag=k)) for k in metric_dict]
    )
    end = SessionEndInfo(status=Status.Value("STATUS_SUCCESS"))
    return (
        _plugin_summary(metadata.EXPERIMENT_TAG, experiment=experiment),
        _plugin_summary(metadata.SESSION_START_INFO_TAG, session_start_info=start),
        _plugin_summary(metadata.SESSION_END_INFO_TAG, session_end_info=end),
    )
