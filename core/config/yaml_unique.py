"""YAML with every key once per mapping (D135).

PyYAML keeps the last of two equal keys without a word, so a second `owners:` under one channel
silently replaced the first (deploy/crosstalk.example.yaml had one). A key given twice in one
mapping is a parse error naming both lines; keys a merge (`<<: *defaults`) brings in may still
be overridden, as YAML means them to be. Imported only to read a YAML file (D56).
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, ScalarNode

MERGE_TAG = "tag:yaml.org,2002:merge"


class UniqueKeyLoader(yaml.SafeLoader):
    """`yaml.SafeLoader` that refuses a mapping with a key written twice."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == MERGE_TAG:
                continue
            key = key_node.value if isinstance(key_node, ScalarNode) else id(key_node)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first at line {seen[key]})",
                    key_node.start_mark,
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def load_unique(text: str) -> Any:
    """`yaml.safe_load` that raises a `yaml.YAMLError` for a key given twice in one mapping."""
    return yaml.load(text, Loader=UniqueKeyLoader)
