"""app.catalog.safetensors_header on its own: safetensors headers (one, or an index of
shards; as JSON or read from files) to exact parameter counts, checked part by part. No
database, no Flask."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from app.catalog import safetensors_header
from app.catalog.hf_config import derive
from app.catalog.safetensors_header import HeaderError, load_header_file, summarise_header

from .safetensors_headers import TINY_GPT_OSS, TINY_LLAMA, dense_header, gpt_oss_header, write_safetensors


def test_a_header_counts_exactly_what_the_config_implies() -> None:
    summary = summarise_header(dense_header(TINY_LLAMA))
    assert summary.params_total == derive(TINY_LLAMA).params_total
    assert summary.bytes_by_dtype == {"BF16": 2 * summary.params_total}
    assert summary.scale_bytes == summary.mxfp4_packed_bytes == 0


@pytest.mark.parametrize("family", ["qwen2", "qwen3", "mistral"])
def test_headers_of_other_dense_families_agree_with_their_configs(family: str) -> None:
    config = {**TINY_LLAMA, "model_type": family, "head_dim": 8, "tie_word_embeddings": family == "qwen2"}
    assert summarise_header(dense_header(config)).params_total == derive(config).params_total


def test_mxfp4_blocks_count_two_values_a_byte_and_scales_are_reported_not_counted() -> None:
    header = gpt_oss_header(TINY_GPT_OSS)
    summary = summarise_header(header)
    derived = derive(TINY_GPT_OSS)
    assert summary.params_total == derived.params_total
    experts, width, hidden, layers = 4, 64, 64, 2
    assert summary.mxfp4_packed_bytes == layers * experts * (2 * width * hidden + hidden * width) // 2
    assert summary.scale_bytes == layers * experts * (2 * width * hidden + hidden * width) // 32
    assert summary.params_by_dtype["MXFP4"] == derived.params.routed_experts - layers * experts * (2 * width + hidden)


def test_an_index_sums_its_shards_and_needs_every_header() -> None:
    header = dense_header(TINY_LLAMA)
    names = [k for k in header if k != "__metadata__"]
    first = {k: header[k] for k in names[: len(names) // 2]}
    second = {k: header[k] for k in names[len(names) // 2 :]}
    weight_map = {k: "model-00001-of-00002.safetensors" for k in first} | {
        k: "model-00002-of-00002.safetensors" for k in second
    }
    index = {
        "metadata": {"total_size": 1},
        "weight_map": weight_map,
        "headers": {"model-00001-of-00002.safetensors": first, "model-00002-of-00002.safetensors": second},
    }
    summary = summarise_header(index)
    assert (summary.params_total, summary.shards) == (derive(TINY_LLAMA).params_total, 2)
    del index["headers"]["model-00002-of-00002.safetensors"]
    with pytest.raises(HeaderError) as raised:
        summarise_header(index)
    assert raised.value.path == "headers"


def test_a_tensor_in_two_shards_is_refused() -> None:
    header = dense_header(TINY_LLAMA)
    with pytest.raises(HeaderError, match="more than one shard"):
        summarise_header({"headers": {"a": header, "b": header}})


def test_layers_past_num_hidden_layers_are_set_apart() -> None:
    header = dense_header({**TINY_LLAMA, "num_hidden_layers": 3})
    summary = summarise_header(header, layers=2)
    assert summary.params_total == derive(TINY_LLAMA).params_total
    assert summary.excluded_params["extra_layers"] > 0


@pytest.mark.parametrize(
    ("tamper", "path"),
    [
        (lambda h: h.update({"x": {"dtype": "Q4", "shape": [1], "data_offsets": [0, 1]}}), "x.dtype"),
        (lambda h: h.update({"x": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}), "x.shape"),
        (lambda h: h.update({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}), "x.data_offsets"),
        (lambda h: h.update({"x": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}}), "x.data_offsets"),
        (lambda h: h.update({"x": [1, 2]}), "x"),
        (lambda h: h.update({"__metadata__": {"format": 1}}), "__metadata__"),
    ],
)
def test_a_malformed_header_names_the_part_at_fault(tamper: Any, path: str) -> None:
    header = dense_header(TINY_LLAMA)
    tamper(header)
    with pytest.raises(HeaderError) as raised:
        summarise_header(header)
    assert raised.value.path == path
    assert not raised.value.too_large


@pytest.mark.parametrize("header", [[], {}, {"__metadata__": {}}, "text"])
def test_a_header_without_tensors_is_refused(header: Any) -> None:
    with pytest.raises(HeaderError):
        summarise_header(header)


def test_too_many_tensors_is_a_size_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safetensors_header, "MAX_TENSORS", 3)
    with pytest.raises(HeaderError) as raised:
        summarise_header(dense_header(TINY_LLAMA))
    assert raised.value.too_large


def test_a_safetensors_file_gives_up_only_its_header(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    write_safetensors(path, dense_header(TINY_LLAMA))
    assert summarise_header(load_header_file(path)).params_total == derive(TINY_LLAMA).params_total


def test_an_index_file_reads_the_headers_of_the_shards_beside_it(tmp_path: Path) -> None:
    header = dense_header(TINY_LLAMA)
    names = [k for k in header if k != "__metadata__"]
    shards = {"model-00001-of-00002.safetensors": names[:5], "model-00002-of-00002.safetensors": names[5:]}
    weight_map = {}
    for shard, tensors in shards.items():
        write_safetensors(tmp_path / shard, {name: header[name] for name in tensors})
        weight_map.update(dict.fromkeys(tensors, shard))
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    summary = summarise_header(load_header_file(index))
    assert (summary.params_total, summary.shards) == (derive(TINY_LLAMA).params_total, 2)


def test_a_safetensors_file_claiming_a_huge_header_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.safetensors"
    path.write_bytes(struct.pack("<Q", 1 << 40) + b"{}")
    with pytest.raises(HeaderError) as raised:
        load_header_file(path)
    assert raised.value.too_large


def test_a_truncated_safetensors_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "short.safetensors"
    path.write_bytes(struct.pack("<Q", 100) + b'{"a": 1')
    with pytest.raises(HeaderError, match="truncated"):
        load_header_file(path)
